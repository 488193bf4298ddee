"""Trajectory readers, found by content (not by file extension) in one table.

Each reader module has `FORMAT`, `accepts(source) -> bool` and `read(source) -> Trajectory`;
a format whose files have no swedeck name (`.traj.json`...) also has `sniff(name, head) ->
bool`, the look at a file's first bytes that lists it in a folder; one that can read the end
(or start) of a large file alone has `part(source, at_end)`; one whose files hold branches
(`PATH#NAME`) sets `BRANCHES = True`; one whose files are joined with the record of the same
run (`trajectory/join.py`) sets `JOINED = True`; one whose `read` does not set the file's
`Fidelity` says what its files record in `FIDELITY`. `Reader.of(module)` reads those
capabilities once, each declared or its default: the loader asks the `Reader`, never the
module (issue 64.5). The first reader that accepts a file reads it; adding a format touches
one file and one line of `READERS`. The coercions of recorded values the readers share are
`trajectory/coerce.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from ..model import Fidelity, Trajectory, TrajectoryFormat
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


@dataclass(frozen=True)
class Reader:
    """A reader module's capabilities, each as the module declares it or its default."""

    FORMAT: TrajectoryFormat
    accepts: Callable[[Source], bool]
    read: Callable[[Source], Trajectory]
    sniff: Callable[[str, bytes, str], bool] | None = None
    part: Callable[[Source, bool], Trajectory | None] | None = None
    branches: bool = False
    """It opens a branch inside a file (`PATH#NAME`)."""
    joined: bool = False
    """Its files are joined with the record of the same run (`trajectory/join.py`)."""
    fidelity: Fidelity | None = None
    """What its files record, where `read` does not say it per file."""

    @classmethod
    def of(cls, module: ModuleType) -> Reader:
        fidelity = getattr(module, "FIDELITY", None)
        return cls(module.FORMAT, module.accepts, module.read, getattr(module, "sniff", None),
                   getattr(module, "part", None), bool(getattr(module, "BRANCHES", False)),
                   bool(getattr(module, "JOINED", False)), fidelity if isinstance(fidelity, Fidelity) else None)


# Order matters: the JSONL formats look at their first lines only; the swedeck formats and ATIF
# have explicit markers; OpenHands' v0 export is a bare list of events, and mini-swe-agent
# accepts any list or `messages` dict, so it goes last.
READERS: tuple[Reader, ...] = tuple(map(Reader.of, (swedeck_jsonl, claude_code, codex, codex_threads, swedeck_json, atif,
                                                     inspect_log, openhands, swe_agent, mini_swe_agent)))

FORMATS: tuple[str, ...] = tuple(reader.FORMAT for reader in READERS)
"""Every format swedeck reads, by name, from the readers themselves."""


def sniffs(name: str, head: bytes, text: str) -> bool:
    """Whether a file named `name`, whose first bytes are `head` (`text` when decoded, cut at its
    last whole line), is a record some reader's `sniff` says it reads."""
    return any(reader.sniff is not None and reader.sniff(name, head, text) for reader in READERS)


def sniffs_part(name: str, head: bytes, text: str) -> bool:
    """Whether such a file is a record whose reader can read a part of it alone (`part`)."""
    return any(reader.part is not None and reader.sniff is not None and reader.sniff(name, head, text)
               for reader in READERS)


__all__ = ["FORMATS", "READERS", "Reader", "Source", "sniffs", "sniffs_part"]
