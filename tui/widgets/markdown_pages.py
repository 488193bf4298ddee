"""Where a streamed Markdown answer may be cut into pages (bench B1).

Textual lays out every block of a `Markdown` widget again whenever its last block grows,
so a frame costs more the longer the answer grows, until the UI draws only a few frames a
second (bench B1, docs/performance.md). Streaming into a sequence of `Markdown`
pages keeps that cost to the last page; the finished pages keep their cached layout.

A cut must not change how the text renders, so it is made only:
- after `page_chars` characters of the current page,
- at a block boundary: the start of a line that follows a blank line,
- where that line starts with a non-blank character (an indented line after a blank one may
  continue a list item or be an indented code block),
- outside a fenced code block.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LINE_HEAD = 80  # a fence marker and what follows it fit in this


class PageSplitter:
    """Feeds streamed text, returns it in pieces; each piece after the first starts a page."""

    def __init__(self, page_chars: int) -> None:
        self.page_chars = page_chars
        self._page_size = 0
        self._line = ""  # the start of the current line (enough to see a fence)
        self._line_rest_blank = True  # what went past `_line` was all whitespace
        self._after_blank = False  # the last complete line was blank
        self._fence: str | None = None  # the opening fence while inside a fenced block

    def feed(self, text: str) -> list[str]:
        pieces: list[str] = []
        start = 0
        position = 0
        while position < len(text):
            if not self._line and self._line_rest_blank and self._could_cut() and not text[position].isspace():
                pieces.append(text[start:position])
                start = position
                self._page_size = 0
            newline = text.find("\n", position)
            end = len(text) if newline < 0 else newline + 1
            self._take(text[position:end])
            self._page_size += end - position
            if newline >= 0:
                self._end_line()
            position = end
        pieces.append(text[start:])
        return pieces

    def _could_cut(self) -> bool:
        return self._after_blank and self._fence is None and self._page_size >= self.page_chars

    def _take(self, part: str) -> None:
        room = _LINE_HEAD - len(self._line)
        if room > 0:
            self._line += part[:room]
            part = part[room:]
        if part and not part.isspace():
            self._line_rest_blank = False

    def _end_line(self) -> None:
        line, rest_blank = self._line, self._line_rest_blank
        self._line, self._line_rest_blank = "", True
        self._after_blank = rest_blank and not line.strip()
        match = _FENCE.match(line)
        if match is None:
            return
        marker = match.group(1)
        if self._fence is None:
            self._fence = marker
        elif (marker[0] == self._fence[0] and len(marker) >= len(self._fence)
              and rest_blank and not line[match.end():].strip()):
            self._fence = None
