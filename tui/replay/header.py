"""The replay view's header line: which file, which step, what is searched, what runs."""

from __future__ import annotations

from typing import Any

import msgspec
from textual.reactive import reactive
from textual.widgets import Static

from ..widgets.text import literal


class ReadProgress(msgspec.Struct, frozen=True):
    """A large file read in a worker while its first or last steps are shown (`ReadingDocument`)."""

    done: float
    """How much of the file is read, 0 to 1."""
    from_end: bool
    """The steps shown are the file's last ones: numbered from the end (-1 the last) until it is read."""


class ReplayHeader(msgspec.Struct, frozen=True):
    """What the replay's header line says: the file, its format, the step, the model, the search and the modes."""

    name: str = ""
    file_number: int = 1
    files: int = 1
    format: str | None = None
    """None while no document is open (an unreadable file)."""
    step: int = 0
    steps: int = 0
    model: str | None = None
    query: str = ""
    matches: int = 0
    searching: bool = False
    following: bool = False
    playing: bool = False
    branch: str | None = None
    """The branch shown (a subagent's run, a sidechain), opened from its main line."""
    answering: bool = False
    """A followed record's agent is being streamed its next answer."""
    reading: ReadProgress | None = None
    """A large file being read, while its first or last `steps` are shown."""

    def but(self, **changes: Any) -> ReplayHeader:
        return msgspec.structs.replace(self, **changes)

    def text(self) -> str:
        parts = [self.name]
        if self.files > 1:
            parts.append(f"file {self.file_number}/{self.files}")
        if self.format is not None and self.reading is not None:
            where = (f"step {self.step - self.steps - 1} of the last {self.steps:,}" if self.reading.from_end
                     else f"step {self.step} of the first {self.steps:,}")
            parts += [self.format, where, f"reading {self.reading.done:.0%}"]
        elif self.format is not None:
            parts += [self.format, f"step {self.step}/{self.steps}"]
        if self.branch:  # after the step: the label is long, the step must stay in sight
            parts.append(f"branch: {self.branch if len(self.branch) <= 40 else self.branch[:39] + '…'}")
        if self.format is not None and self.model:
            parts.append(self.model)
        if self.query:
            parts.append(f"/{self.query}: {self.matches} steps" + (" (searching…)" if self.searching else ""))
        if self.following:
            parts.append("following" + (" · answering…" if self.answering else ""))
        if self.playing:
            parts.append("playing (any key stops)")
        return " · ".join(parts)


class ReplayHeaderBar(Static):
    """The header, drawn from `info` (bound to `ReplayState.header`); names shown literally."""

    info: reactive[ReplayHeader] = reactive(ReplayHeader, always_update=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)

    def watch_info(self, info: ReplayHeader) -> None:
        self.update(literal(info.text()))
