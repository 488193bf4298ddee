"""Lazy access to a live `.traj.jsonl` (SPEC §11.1, §11.4): byte offsets of its lines, each
message parsed only when asked for, and `refresh()` that reads only the bytes appended
since the last look (for `replay --follow` and `watch`).

The replay UI's first screen of a 50 MB file needs the header and a few messages, not the
whole file parsed into models.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO

from ..messages import Message
from .errors import TrajectoryError
from .loader import check_regular_file
from .model import MetaEvent
from .parse import loads
from .readers.swedeck_jsonl import is_header, meta_event

_CHUNK = 1 << 20
_WHOLE_LINE = 32 << 20
"""A completed line up to this size is read whole to be indexed; a longer one by its head and
tail (what says what it is: its role first, its `extra` last), so memory stays bounded."""
_EDGE = 64 << 10
_META_LINE = re.compile(rb'^\s*\{\s*"role"\s*:\s*"meta"')
_CACHE_SIZE = 256
NOT_OURS = "not a swedeck .traj.jsonl (no swedeck-traj/1 header on line 1)"


class TrajectoryIndex:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._scanned = 0  # bytes up to the end of the last complete line
        self._looked = 0  # bytes searched for a newline: an unfinished line is never read twice
        self._identity: tuple[int, int] | None = None
        self._lines = 0
        self._messages: list[tuple[int, int]] = []  # (offset, length) of each message line
        self._meta: list[tuple[int, int, int]] = []  # (offset, length, messages before it)
        self._cache: dict[int, Message] = {}
        self.header: dict[str, Any] = {}
        self.torn_tail = False
        """True while the file ends in an incomplete line (being written, or cut off by a crash)."""
        if not is_header(self._first_line()):  # before indexing: another tool's .jsonl is told apart at once
            raise TrajectoryError(self.path, NOT_OURS)
        self.refresh()
        if not is_header(self.header):
            raise TrajectoryError(self.path, NOT_OURS)

    def _first_line(self) -> Any:
        check_regular_file(self.path)
        with open(self.path, "rb") as handle:
            line = handle.readline(_WHOLE_LINE)
        try:
            return loads(line)
        except ValueError:
            return None

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
            handle.seek(self._looked)
            # A line is kept only while it lies in the chunk at hand; a line that spans chunks
            # (or a file growing with no newline) is read back once it ends, never carried.
            while chunk := handle.read(_CHUNK):
                base, start = self._looked, 0
                while (end := chunk.find(b"\n", start)) != -1:
                    line_start = self._scanned
                    if line_start >= base:
                        self._add_line(line_start, chunk[line_start - base:end])
                    else:
                        self._add_line(line_start, self._line_bytes(handle, line_start, base + end), base + end - line_start)
                    self._scanned = base + end + 1
                    start = end + 1
                self._looked = base + len(chunk)
            self.torn_tail = self._looked > self._scanned and self._tail_is_text(handle)
        return len(self._messages) - before

    def _line_bytes(self, handle: BinaryIO, start: int, end: int) -> bytes:
        """The line `start..end` from the file (the handle is left where it was)."""
        here = handle.tell()
        try:
            if end - start <= _WHOLE_LINE:
                handle.seek(start)
                return bytes(handle.read(end - start))
            handle.seek(start)
            head = handle.read(_EDGE)
            handle.seek(end - _EDGE)
            return bytes(head + b" " + handle.read(_EDGE))
        finally:
            handle.seek(here)

    def _tail_is_text(self, handle: BinaryIO) -> bool:
        """Whether the unfinished last line has anything but whitespace (looked at, bounded)."""
        here = handle.tell()
        try:
            handle.seek(max(self._scanned, self._looked - _EDGE))
            return bool(handle.read(_EDGE).strip())
        finally:
            handle.seek(here)

    def message(self, index: int) -> Message:
        if index < 0:
            index += len(self._messages)
        if index in self._cache:
            return self._cache[index]
        offset, length = self._messages[index]
        record = self._read(offset, length)
        try:
            message = Message.from_record(record)
        except ValueError as error:
            raise TrajectoryError(self.path, f"message {index}: {str(error).splitlines()[0]}") from None
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[index] = message
        return message

    def meta_events(self) -> list[MetaEvent]:
        return [meta_event(self._read(offset, length), count) for offset, length, count in self._meta]

    def _reset(self, identity: tuple[int, int]) -> None:
        self._identity, self._scanned, self._looked, self._lines = identity, 0, 0, 0
        self._messages, self._meta, self._cache, self.header = [], [], {}, {}

    def _add_line(self, offset: int, line: bytes, length: int | None = None) -> None:
        """Index one line at `offset`: `line` is its bytes (or, for a huge line, its head and
        tail) and `length` its length in the file when that differs."""
        length = len(line) if length is None else length
        self._lines += 1
        if self._lines == 1:
            try:
                header = loads(line)
            except ValueError:
                header = None
            self.header = header if isinstance(header, dict) else {}
        elif _META_LINE.match(line):
            self._meta.append((offset, length, len(self._messages)))
        elif line.strip():
            self._messages.append((offset, length))

    def _read(self, offset: int, length: int) -> Any:
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
        try:
            return loads(data)
        except ValueError as error:
            raise TrajectoryError(self.path, f"byte {offset}: {error}") from None
