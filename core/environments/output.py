"""Turning a command's raw bytes into what the model reads (SPEC §8).

Memory stays bounded whatever the command prints: `OutputBuffer` keeps the first and
the last `keep` bytes and only counts the rest, so `yes | head -c 100M` costs no more
than a short listing.
"""

from __future__ import annotations

from collections import deque

from ..text import collapse_progress, strip_escapes


class OutputBuffer:
    """Head + rolling tail of a byte stream, with totals for the elision note."""

    def __init__(self, keep: int):
        self.keep = keep
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total_bytes = 0
        self.total_lines = 0

    def add(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_lines += data.count(b"\n")
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.keep:
            self.tail_size -= len(self.tail.popleft())

    @property
    def elided_bytes(self) -> int:
        return self.total_bytes - len(self.head) - self.tail_size

    def text(self) -> tuple[str, str | None]:
        """(head, tail) decoded; tail is None when nothing was dropped between them."""
        tail = b"".join(self.tail)
        if self.elided_bytes <= 0:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace"), None
        return bytes(self.head).decode("utf-8", errors="replace"), tail.decode("utf-8", errors="replace")


def clean(text: str) -> str:
    """ANSI escapes stripped, `\\r\\n` normalised, `\\r` progress lines reduced to their last segment."""
    return collapse_progress(strip_escapes(text))


def limit(head: str, tail: str | None, output_limit: int, dropped_bytes: int = 0,
          dropped_lines: int = 0) -> tuple[str, bool]:
    """Head and tail within `output_limit` characters, with a note of what was cut.

    `tail` is None when the text is whole; otherwise `dropped_*` count what `OutputBuffer`
    discarded between head and tail (bytes, close to characters for most output)."""
    if tail is None:
        if len(head) <= output_limit:
            return head, False
        head, tail = head[: len(head) // 2], head[len(head) // 2:]
    half = max(output_limit // 2, 1)
    kept_head, kept_tail = head[:half], tail[-half:]
    cut = head[half:] + tail[: len(tail) - len(kept_tail)]
    chars = dropped_bytes + len(cut)
    lines = dropped_lines + cut.count("\n")
    note = f"\n\n<output truncated: {chars} characters ({lines} lines) elided; showing head and tail>\n\n"
    return kept_head + note + kept_tail, True
