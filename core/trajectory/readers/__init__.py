"""Trajectory readers, found by content (not by file extension) in one table.

Each reader module has `FORMAT`, `accepts(source) -> bool` and `read(source) -> Trajectory`;
a format whose files have no swedeck name (`.traj.json`...) also has `sniff(name, head) ->
bool`, the look at a file's first bytes that lists it in a folder; one whose files hold
branches (`PATH#NAME`) sets `BRANCHES = True`; one whose `read` does not set the file's
`Fidelity` says what its files record in `FIDELITY`. The first reader that accepts a file
reads it; adding a format touches one file and one line of `READERS`. The coercions of
recorded values the readers share are `trajectory/coerce.py`.
"""

from __future__ import annotations

from typing import Protocol

from ..model import Trajectory, TrajectoryFormat
from . import (
    atif,
    claude_code,
    codex,
    codex_threads,
    inspect_log,
    mini_swe_agent,
    openhands,
    swe_agent,
    swedeck_json,
    swedeck_jsonl,
)
from .source import Source


class Reader(Protocol):
    """What each reader module provides."""

    FORMAT: TrajectoryFormat

    def accepts(self, source: Source) -> bool: ...
    def read(self, source: Source) -> Trajectory: ...


# Order matters: the JSONL formats look at their first lines only; the swedeck formats and ATIF
# have explicit markers; OpenHands' v0 export is a bare list of events, and mini-swe-agent
# accepts any list or `messages` dict, so it goes last.
READERS: tuple[Reader, ...] = (swedeck_jsonl, claude_code, codex, codex_threads, swedeck_json, atif, inspect_log,
                               openhands, swe_agent, mini_swe_agent)

FORMATS: tuple[str, ...] = tuple(reader.FORMAT for reader in READERS)
"""Every format swedeck reads, by name, from the readers themselves."""


def opens_branches(reader: Reader) -> bool:
    """Whether the reader opens a branch inside a file (`PATH#NAME`)."""
    return bool(getattr(reader, "BRANCHES", False))


def sniffs(name: str, head: bytes, text: str) -> bool:
    """Whether a file named `name`, whose first bytes are `head` (`text` when decoded, cut at its
    last whole line), is a record some reader's `sniff` says it reads."""
    for reader in READERS:
        sniff = getattr(reader, "sniff", None)
        if sniff is not None and sniff(name, head, text):
            return True
    return False


def sniffs_part(name: str, head: bytes, text: str) -> bool:
    """Whether such a file is a record whose reader can read a part of it alone (`part`)."""
    return any(getattr(reader, "part", None) is not None and reader.sniff(name, head, text)  # type: ignore[attr-defined]
               for reader in READERS if getattr(reader, "sniff", None) is not None)


__all__ = ["FORMATS", "READERS", "Reader", "Source", "opens_branches", "sniffs", "sniffs_part"]
