"""Lazy access to a live `.traj.jsonl` (SPEC §11.1, §11.4): byte offsets of its lines, each
message parsed only when asked for, and `refresh()` that reads only the bytes appended
since the last look (for `replay --follow` and `watch`).

The replay UI's first screen of a 50 MB file needs the header and a few messages, not the
whole file parsed into models.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..messages import Message
from .errors import TrajectoryError
from .loader import check_regular_file
from .model import MetaEvent
from .parse import loads
from .readers.swedeck_jsonl import is_header, meta_event

_CHUNK = 1 << 20
_META_LINE = re.compile(rb'^\s*\{\s*"role"\s*:\s*"meta"')
_CACHE_SIZE = 256


class TrajectoryIndex:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._scanned = 0  # bytes up to the end of the last complete line
        self._identity: tuple[int, int] | None = None
        self._lines = 0
        self._messages: list[tuple[int, int]] = []  # (offset, length) of each message line
        self._meta: list[tuple[int, int, int]] = []  # (offset, length, messages before it)
        self._cache: dict[int, Message] = {}
        self.header: dict[str, Any] = {}
        self.torn_tail = False
        """True while the file ends in an incomplete line (being written, or cut off by a crash)."""
        self.refresh()
        if not is_header(self.header):
            raise TrajectoryError(self.path, "not a swedeck .traj.jsonl (no swedeck-traj/1 header on line 1)")

    def __len__(self) -> int:
        return len(self._messages)

    def refresh(self) -> int:
        """Index the lines appended since the last call; the number of new messages."""
        stat = check_regular_file(self.path)
        identity = (stat.st_dev, stat.st_ino)
        if identity != self._identity or stat.st_size < self._scanned:  # replaced or truncated: start over
            self._reset(identity)
        before = len(self._messages)
        with open(self.path, "rb") as handle:
            handle.seek(self._scanned)
            carry = b""
            offset = self._scanned
            while chunk := handle.read(_CHUNK):
                data = carry + chunk
                start = 0
                while (end := data.find(b"\n", start)) != -1:
                    self._add_line(offset + start, data[start:end])
                    start = end + 1
                offset += start
                carry = data[start:]
            self._scanned = offset
            self.torn_tail = bool(carry.strip())
        return len(self._messages) - before

    def message(self, index: int) -> Message:
        if index < 0:
            index += len(self._messages)
        if index in self._cache:
            return self._cache[index]
        offset, length = self._messages[index]
        record = self._read(offset, length)
        try:
            message = Message.model_validate(record)
        except ValueError as error:
            raise TrajectoryError(self.path, f"message {index}: {str(error).splitlines()[0]}") from None
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[index] = message
        return message

    def meta_events(self) -> list[MetaEvent]:
        return [meta_event(self._read(offset, length), count) for offset, length, count in self._meta]

    def _reset(self, identity: tuple[int, int]) -> None:
        self._identity, self._scanned, self._lines = identity, 0, 0
        self._messages, self._meta, self._cache, self.header = [], [], {}, {}

    def _add_line(self, offset: int, line: bytes) -> None:
        self._lines += 1
        if self._lines == 1:
            try:
                header = loads(line)
            except ValueError:
                header = None
            self.header = header if isinstance(header, dict) else {}
        elif _META_LINE.match(line):
            self._meta.append((offset, len(line), len(self._messages)))
        elif line.strip():
            self._messages.append((offset, len(line)))

    def _read(self, offset: int, length: int) -> Any:
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
        try:
            return loads(data)
        except ValueError as error:
            raise TrajectoryError(self.path, f"byte {offset}: {error}") from None
