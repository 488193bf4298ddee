"""A token chart (SPEC §11.1): one value per step as bars, with a y axis (0 and the top
value), the context window as a line, the current step marked, and marks under the steps
where something changed the prompt (a compaction `⟲`, a processor change `p`).

A plain widget that draws its own lines (no plotting library: the replay's first frame
must stay light, bench B2). Each column is one step, or a range of steps when there are
more steps than columns (the column shows the range's largest value).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content, Span
from textual.reactive import reactive
from textual.widget import Widget

BLOCKS = " ▁▂▃▄▅▆▇█"


def _short(value: int) -> str:
    """`131k`, `1.2M`, `950`: an axis label."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value // 1000}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


Columns = tuple[int, tuple[str, str], int, int, list[int]]
"""What a chart's bars are, whatever step is current: the top value, the axis labels, the
axis's width, the steps a column and each column's value."""


def columns_of(points: list[int], width: int, window: int | None = None) -> Columns:
    """The bars of `points` at `width` (a pass over every point: `TokenChart` keeps them while
    the points and the width stay, so a jump in a 45,000-step file does not pass over all)."""
    top = max(max(points, default=0), window or 0, 1)
    labels = (_short(top), "0")
    axis = max(len(label) for label in labels) + 1
    columns = max(1, width - axis - 1)
    count = len(points)
    per = max(1, -(-count // columns)) if count else 1
    shown = -(-count // per) if count else 0
    return top, labels, axis, per, [max(points[i * per:(i + 1) * per]) for i in range(shown)]


def chart_lines(points: list[int], width: int, height: int, *, window: int | None = None,
                current: int | None = None, marks: dict[int, str] | None = None,
                unit: str = "tokens", columns: Columns | None = None) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """The chart as text lines, each with (start, end, style) spans: `height - 1` rows of bars
    and one axis row. `current` and the keys of `marks` are 1-based steps. `columns`: the
    bars of these points at this width, when known (`columns_of`)."""
    marks = marks or {}
    rows = max(1, height - 1)
    top, labels, axis, per, values = columns or columns_of(points, width, window)
    count = len(points)
    shown = len(values)
    current_column = (current - 1) // per if current and count else None
    window_row = None
    if window and top:
        window_row = min(rows - 1, max(0, rows - round(window / top * rows)))
    lines: list[tuple[str, list[tuple[int, int, str]]]] = []
    for row in range(rows):
        label = labels[0] if row == 0 else (labels[1] if row == rows - 1 else "")
        text = label.rjust(axis - 1) + " ┤" if row in (0, rows - 1) else " " * (axis - 1) + " │"
        spans: list[tuple[int, int, str]] = []
        for column, value in enumerate(values):
            eighths = round(value / top * rows * 8) if top else 0
            level = eighths - (rows - 1 - row) * 8
            cell = BLOCKS[max(0, min(8, level))]
            if cell == " " and row == window_row:
                cell = "┄"
                spans.append((len(text), len(text) + 1, "dim"))
            if column == current_column:
                spans.append((len(text), len(text) + 1, "reverse"))
            text += cell
        lines.append((text, spans))
    base = " " * (axis - 1) + " └"
    marker_row = list(" " * shown)
    for step, mark in marks.items():
        column = (step - 1) // per
        if 0 <= column < shown:
            marker_row[column] = mark[:1]
    if current_column is not None and current_column < shown and marker_row[current_column] == " ":
        marker_row[current_column] = "▲"
    axis_text = base + "".join(marker_row)
    caption = ""
    if current and count and current <= count:
        caption = f" step {current}/{count}: {points[current - 1]:,} {unit}"
    if window:
        caption += f" · window {window:,}"
    if per > 1:
        caption += f" · {per} steps a column"
    lines.append((axis_text + caption, []))
    return lines


class TokenChart(Widget):
    """The chart of `points` (one value per step); `current`, `window` and `marks` as above."""

    DEFAULT_CSS = """
    TokenChart { height: 5; }
    """
    points: reactive[list[int]] = reactive(list, always_update=True)
    window: reactive[int | None] = reactive(None)
    current: reactive[int | None] = reactive(None)
    marks: reactive[dict[int, str]] = reactive(dict, always_update=True)

    def __init__(self, unit: str = "tokens", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unit = unit
        self._columns: tuple[list[int], int, int | None, Columns] | None = None
        """The bars of the points drawn last: (those points, width, window, bars)."""

    def render(self) -> Content:
        width, height = self.content_size.width, self.content_size.height
        points = self.points
        kept = self._columns
        if kept is None or kept[0] is not points or kept[1:3] != (width, self.window):
            kept = self._columns = (points, width, self.window, columns_of(points, width, self.window))
        lines = chart_lines(points, width, height, window=self.window, current=self.current,
                            marks=self.marks, unit=self.unit, columns=kept[3])
        out = Content("")
        for number, (text, spans) in enumerate(lines):
            line = Content(text, spans=[Span(start, end, style) for start, end, style in spans])
            out = out + line if number == 0 else out + Content("\n") + line
        return out
