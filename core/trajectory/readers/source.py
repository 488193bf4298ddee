"""What a reader gets: the file's text, its first line and (parsed once, on demand) its JSON.

A file of ASCII alone (what JSON writers produce by default) is parsed from its bytes and
decoded to text only when a reader asks for the text (the JSONL readers): a 24 MB document
is not copied into a string to be parsed.

A file of `MAP_BYTES` or more is mapped, not read (issue 49): `content` is then the mapping,
its lines are found in it and parsed one at a time, and the pages a pass over its lines has
left behind are given back (`MADV_DONTNEED`), so the process holds what it made of the
file, never the file. A line longer than `MAX_LINE_BYTES` is damaged, said and skipped,
never copied (a JSON line of 1 GB)."""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec

from ..outline import outline, plain
from ..parse import loads

_UNSET = object()
MAX_LINE_BYTES = 256 << 20
"""A JSONL line past this is not parsed (it would take several times its size in memory): the
reader skips it as damaged, with a warning that says its size."""
_WINDOW = 8 << 20
"""`Source.lines` splits this many bytes at a time."""
_FAULT_AROUND = 64 << 10
"""What Linux maps around a page a read of a mapping faults in (`fault_around_bytes`): what a
read counts for at most."""
_PACE_LINES = 1023
"""`Source.pace` is called when the line number's low bits are all clear: every 1,024 lines."""
_GIVE_BACK = 64 << 20
"""A pass over a mapped file's lines gives back the pages behind it every this many bytes."""
_NON_SPACE = re.compile(r"\S")
_NON_SPACE_BYTES = re.compile(rb"\S")


class Source(msgspec.Struct, dict=True):
    """A trajectory file (or folder) as the readers see it (`dict=True`: room for its cached properties)."""

    path: Path
    content: str | bytes | mmap.mmap = ""
    """The file's text; bytes when they are ASCII alone (`text` decodes them when first read);
    the file mapped when it is `MAP_BYTES` or larger (its bytes, UTF-8, never decoded whole)."""
    data: bytes = b""
    """The raw bytes of a binary file (an Inspect `.eval` zip); empty for text files."""
    folder: bool = False
    """`path` is a folder (a Harbor trial, an OpenHands v1 event folder)."""
    unit: int = 1
    """Which run of a file that holds several (`PATH#N`: an Inspect log's sample N)."""
    branch: str | None = None
    """A branch inside the file (`PATH#NAME`: a Claude Code leaf's uuid, an embedded ATIF subagent's id)."""
    _document: Any = _UNSET
    _lines: list[tuple[int, Any]] | None = None
    read_to: int = 0
    """How far `lines` has read (the progress of a reading in another thread)."""
    stopped: bool = False
    """Set by `stop()`: `lines` ends at its next window, raising `Stopped`."""
    ahead: Any = None
    """A zip's members decompressed ahead (the replay's read-ahead, `startup.read_ahead`):
    called with a member's name, its bytes, or None when it was not read ahead."""
    pace: Any = None
    """Called by `lines` every `_PACE_LINES` lines, when set: a reading in a worker thread waits
    there while the UI handles a key (the replay's `key_quiet`)."""

    def stop(self) -> None:
        """End a reading of this file under way in another thread (its file was left)."""
        self.stopped = True

    def json_lines(self, limit: int | None = None) -> list[tuple[int, Any]]:
        """(line number, parsed value) of each non-blank line; a damaged line's value is the
        `ValueError` saying why, so readers of JSONL formats skip it with a warning. The
        whole file's lines are parsed once (a reader's `accepts` and its `read` share them)."""
        if self._lines is not None:
            return self._lines if limit is None else self._lines[:limit]
        out = list(self._parsed(limit))
        if limit is None:
            self._lines = out
        return out

    def line_spans(self) -> Iterator[tuple[int, int, int]]:
        """(line number, start, end) of each non-blank line, in `content`'s offsets. Over a
        mapped file, the pages already passed are given back as it goes."""
        text, start, number = self.content, 0, 0
        newline = "\n" if isinstance(text, str) else b"\n"
        non_space = _NON_SPACE if isinstance(text, str) else _NON_SPACE_BYTES
        mapped = text if isinstance(text, mmap.mmap) else None
        given_back = 0
        while start <= len(text):
            if mapped is not None:  # a long line is searched, and given back, a window at a time
                end, given_back = _find_line_end(mapped, start, given_back)
            else:
                end = text.find(newline, start) if start else self._first_end  # type: ignore[arg-type]
            end = len(text) if end == -1 else end
            line_start, start, number = start, end + 1, number + 1
            if end > line_start and non_space.search(text, line_start, end):  # type: ignore[arg-type]
                yield number, line_start, end

    def lines(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, Any]]:
        """(line number, start, line) of each non-blank line, the line's text or bytes as in
        `content`, or, for a line longer than `MAX_LINE_BYTES`, the `ValueError` that says so
        (the line never copied). Split a window at a time, which costs a fraction of finding
        each line on its own (issue 49: 2.8 million lines of a 2 GB rollout); a mapped file's
        windows are given back as they are passed. `start`, `end`: where lines start, to read
        only those between (the end or the start of a file: line numbers count from `start`).
        `read_to` says how far it got, for a reading's progress; `stop()` ends it (`Stopped`)."""
        content = self.content
        size, pos, number = len(content) if end is None else end, start, 1
        newline: Any = "\n" if isinstance(content, str) else b"\n"
        non_space = _NON_SPACE if isinstance(content, str) else _NON_SPACE_BYTES
        mapped = content if isinstance(content, mmap.mmap) else None
        given_back = start
        while pos < size:
            self.read_to = pos
            if self.stopped:
                raise Stopped(self.path)
            stop = min(size, pos + _WINDOW)
            window: Any = content if pos == 0 and stop == size and mapped is None else content[pos:stop]
            parts = window.split(newline)
            if stop < size:
                parts.pop()  # the line the window cut: it starts the next window
            if not parts:  # a line longer than the window
                if mapped is not None:
                    line_end, given_back = _find_line_end(mapped, pos, given_back)
                else:
                    line_end = content.find(newline, pos)
                line_end = size if line_end == -1 else min(line_end, size)
                if line_end - pos > MAX_LINE_BYTES:
                    yield number, pos, too_long(line_end - pos)
                elif non_space.search(content, pos, line_end):  # type: ignore[arg-type]
                    yield number, pos, content[pos:line_end]
                pos, number = line_end + 1, number + 1
                continue
            del window
            pace = self.pace
            for line in parts:
                if line and not line.isspace():
                    yield number, pos, line
                pos += len(line) + 1
                number += 1
                if pace is not None and not number & _PACE_LINES:
                    pace()
            if mapped is not None:
                given_back = _give_back(mapped, given_back, min(pos, size))
        self.read_to = size

    def _parsed(self, limit: int | None) -> Iterator[tuple[int, Any]]:
        text, count = self.content, 0
        for number, start, end in self.line_spans():
            if limit is not None and count >= limit:
                return
            count += 1
            if end - start > MAX_LINE_BYTES and not (count == 1 and self._blank_from(end + 1)):
                yield number, too_long(end - start)
                continue
            line = text[start:end]
            try:
                whole = len(line) == len(text) or self._blank_from(end + 1) and count == 1
                if not whole:
                    value = loads(line)
                else:  # one line: the document, parsed once (all of it for a reader that keeps the records)
                    value = self.document if limit is not None else plain(self.document)
                yield number, value
            except ValueError as error:
                yield number, error

    @cached_property
    def first_line(self) -> Any:
        """The first line as JSON, or None when it is not a JSON value on its own.

        A `.traj.json` is often one line: then the first line is the document, parsed once."""
        end = self._first_end
        if end == -1 or self._blank_from(end):
            try:
                return self.document
            except ValueError:
                return None
        if end > MAX_LINE_BYTES:
            return None
        try:
            return loads(self.content[:end])
        except ValueError:
            return None

    @cached_property
    def text(self) -> str:
        content = self.content
        if isinstance(content, mmap.mmap):
            return content[:].decode("utf-8", errors="replace")
        return content if isinstance(content, str) else content.decode("ascii")

    @property
    def blank(self) -> bool:
        """Nothing but white space (or nothing)."""
        return self._blank_from(0)

    def _blank_from(self, start: int) -> bool:
        content = self.content
        found = _NON_SPACE.search(content, start) if isinstance(content, str) else _NON_SPACE_BYTES.search(content, start)
        return found is None

    @cached_property
    def _first_end(self) -> int:
        """Where the first line ends (-1: the text is one line); found once, as a one-line
        document of 24 MB is searched to its end. (Bytes are ASCII: their offsets are the text's.)"""
        content = self.content
        if isinstance(content, mmap.mmap):
            return _find_line_end(content, 0, 0)[0]
        return content.find("\n") if isinstance(content, str) else content.find(b"\n")

    @property
    def document(self) -> Any:
        """The whole file as one JSON value (raises ValueError when it is not); an object as an
        `outline.Outline`, its values parsed when read; a list as an `outline.RawList`, its items
        parsed when read."""
        if self._document is _UNSET:
            self._document = outline(self.content, lists=True)
        return self._document


PART_BYTES = 4 << 20
"""A reader's `part` reads this much of a file's end (or start) first, four times more while
that holds too little, up to `PART_MAX_BYTES`."""
PART_MAX_BYTES = 64 << 20


def part_bounds(content: Any, at_end: bool) -> Iterator[tuple[int, int | None]]:
    """Where the whole lines of a file's end (or start) lie, try after try, each part four
    times the one before and less than the file (`start`, `end` for `Source.lines`); a part
    that one line longer than it leaves empty is passed over."""
    size, reach = len(content), PART_BYTES
    while reach < size and reach <= PART_MAX_BYTES:
        if at_end:
            start = content.find(b"\n", size - reach) + 1
            if start:
                yield start, None
        else:
            end = content.rfind(b"\n", 0, reach) + 1
            if end:
                yield 0, end
        reach *= 4


class Stopped(Exception):
    """A reading ended by `Source.stop()`: nobody waits for it any more."""


def too_long(size: int) -> ValueError:
    """What a reader says of a line it does not parse for its size."""
    return ValueError(f"a line of {size:,} bytes, larger than the {MAX_LINE_BYTES:,} swedeck parses")


def span(content: Any, start: int, end: int) -> Any:
    """`content[start:end]`; from a mapped file, all its pages given back every `_GIVE_BACK`
    bytes read so (a search over a 2 GB rollout read every step, and kept every page it
    touched in the process: 2 GB of resident memory). One page at a time cost a fault and a
    call per read, 9 us each."""
    part = content[start:end]
    if isinstance(content, MappedFile):
        content.read_since += end - start + _FAULT_AROUND  # the kernel maps the 64 KB around a page a read faults in
        if content.read_since >= _GIVE_BACK:
            content.read_since = 0
            _give_back(content, 0, len(content))
    return part


class MappedFile(mmap.mmap):
    """A file the loader mapped (`Source.content`), which counts what `span` has read of it
    since its pages were last given back."""

    read_since = 0


def _find_line_end(mapped: mmap.mmap, start: int, given_back: int) -> tuple[int, int]:
    """Where the line at `start` ends in a mapped file (-1: at the end), searched a window at a
    time, every window passed given back; and where the next give-back starts."""
    size = len(mapped)
    while True:
        if start - given_back >= _GIVE_BACK:
            given_back = _give_back(mapped, given_back, start)
        stop = min(size, start + _GIVE_BACK)
        end = mapped.find(b"\n", start, stop)
        if end != -1 or stop >= size:
            return end, given_back
        start = stop


def _give_back(mapped: mmap.mmap, start: int, end: int) -> int:
    """Drop the pages of `mapped` in [start, end) from the process (read again from the page
    cache if touched later); returns where the next give-back starts."""
    start -= start % mmap.PAGESIZE
    end -= end % mmap.PAGESIZE
    if end > start:
        try:
            mapped.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError, AttributeError):  # not every platform has it: the pages stay
            return start
    return end


def sniff_lines(accepts: Any, name: str, text: str) -> bool:
    """Whether a JSONL reader's `accepts` takes a `.jsonl` file from its first whole lines
    (`text`): the look a folder's listing takes, without reading the file whole."""
    if not name.endswith(".jsonl"):
        return False
    try:
        return bool(accepts(Source(path=Path(name), content=text)))
    except ValueError:  # not JSON: not this reader's
        return False
