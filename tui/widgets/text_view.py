"""A long literal text, rendered only where it is on screen (SPEC §10.3, bench B2).

A `Static` renders every line of its text whenever the text changes; for an observation of
tens of thousands of characters that was most of a replay step jump (bench B2).
`TextView` splits the text into lines and renders a line when it scrolls into view, with
the search matches marked. Long lines wrap at the view's width (the rows are worked out
again when the width changes; `wrap=False` scrolls them sideways instead). Text is never
parsed as markup; escape sequences and control characters are dropped.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .text import MAX_MARKS, clean_output

MATCH_STYLE = Style(reverse=True, bold=True)
CHANGED_STYLE = Style(bold=True, underline=True)
"""A line the other run does not have (`swedeck diff`)."""

MAX_STRIPS = 1024
"""Rendered rows kept (a view shows a few dozen; scrolling back redraws none of those kept)."""


class TextView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    TextView { height: 1fr; padding: 0 1; background: transparent; }
    """

    def __init__(self, *, wrap: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = ""
        self.query_text = ""
        self.wrap = wrap
        self._lines: list[str] = []
        self._rows: list[tuple[int, int, int]] = []
        """Each screen row: (line index, start, end) of the part of the line it shows."""
        self._wrapped_at = -1
        self._changed: frozenset[int] = frozenset()
        self._strips: dict[int, Strip] = {}
        """Rows rendered, up to `MAX_STRIPS`. Not Textual's `LRUCache`: its entries are a ring
        of lists, so each clear (every step shown) left up to 1,024 lines and their caches in
        reference cycles, 20,000 objects for the next young collection to walk and free
        (15-37 ms each, twice a second while keys were pressed in a replay; issue 49)."""

    def update(self, text: str, query: str = "", changed: frozenset[int] = frozenset()) -> None:
        """Show `text` from its top, with every match of `query` (case-insensitive) marked, and
        the lines numbered in `changed` (0-based) set apart."""
        self.text, self.query_text, self._changed = text, query, changed
        self._lines = clean_output(text).expandtabs(8).split("\n") if text else []
        self._wrapped_at = -1
        self._layout()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def on_resize(self) -> None:
        if self.wrap and self._wrapped_at != self._wrap_width():
            self._layout()
            self.refresh()

    def _wrap_width(self) -> int:
        return max(1, self.scrollable_content_region.width or self.size.width or 80)

    def _layout(self) -> None:
        """The rows: a line each, or (wrapping) as many as its width takes at the view's width."""
        self._strips.clear()
        if not self.wrap:
            self._rows = [(index, 0, len(line)) for index, line in enumerate(self._lines)]
            self.virtual_size = Size(max(map(cell_len, self._lines), default=0), len(self._rows))
            return
        width = self._wrapped_at = self._wrap_width()
        rows: list[tuple[int, int, int]] = []
        for index, line in enumerate(self._lines):
            if len(line) <= width and (line.isascii() or cell_len(line) <= width):
                rows.append((index, 0, len(line)))
            elif line.isascii():
                start = 0
                while len(line) - start > width:
                    space = line.rfind(" ", start, start + width)  # at a word's end where there is one
                    end = space + 1 if space > start else start + width
                    rows.append((index, start, end))
                    start = end
                rows.append((index, start, len(line)))
            else:
                start, cells = 0, 0
                for position, character in enumerate(line):
                    size = cell_len(character)
                    if cells + size > width and position > start:
                        rows.append((index, start, position))
                        start, cells = position, 0
                    cells += size
                rows.append((index, start, len(line)))
        self._rows = rows
        self.virtual_size = Size(width, len(rows))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        style = self.rich_style
        width = self.size.width
        if row >= len(self._rows):
            return Strip.blank(width, style)
        strip = self._strips.get(row)
        if strip is None:
            if len(self._strips) >= MAX_STRIPS:
                self._strips.clear()
            index, start, end = self._rows[row]
            strip = self._strips[row] = self._render_line(self._lines[index][start:end], index in self._changed)
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_offsets(scroll_x, row)

    def _render_line(self, line: str, changed: bool = False) -> Strip:
        """One segment per run of text (two more per search match): no markup, no parsing."""
        style = self.rich_style + CHANGED_STYLE if changed else self.rich_style
        segments: list[Segment] = []
        position = 0
        if self.query_text:
            lower, needle = line.casefold(), self.query_text.casefold()
            start = lower.find(needle) if len(lower) == len(line) else -1
            marks = 0
            while start != -1 and marks < MAX_MARKS:
                marks += 1
                end = start + len(needle)
                segments += [Segment(line[position:start], style), Segment(line[start:end], style + MATCH_STYLE)]
                position = end
                start = lower.find(needle, end)
        segments.append(Segment(line[position:], style))
        return Strip([segment for segment in segments if segment.text], cell_len(line))
