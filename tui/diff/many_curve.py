"""Every run's context size in one chart (issue 66): the reference `●`, run k its digit, `◉`
where two or more meet, over the aligned rows (a run with no step at a row leaves no mark),
with the scale on the first line."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

_STYLES = ("many-curve--reference", "many-curve--run1", "many-curve--run2", "many-curve--run3")


def columns(values: list[int | None], width: int) -> list[int | None]:
    """`values` over `width` columns: each column the largest value of the rows it covers
    (None where no run has a step there). Both charts of the diff draw with it."""
    out: list[int | None] = []
    for column in range(width):
        start = column * len(values) // width
        end = max(start + 1, (column + 1) * len(values) // width)
        present = [value for value in values[start:end] if value is not None]
        out.append(max(present) if present else None)
    return out


def mark(run: int) -> str:
    """Run `run`'s mark in the chart: the reference's dot, else its number (`+` past 9)."""
    return "●" if run == 0 else str(run) if run <= 9 else "+"


class ManyCurve(Widget):
    DEFAULT_CSS = """
    ManyCurve { height: 5; padding: 0 1; }
    ManyCurve > .many-curve--reference { color: $accent; text-style: bold; }
    ManyCurve > .many-curve--run1 { color: $warning; }
    ManyCurve > .many-curve--run2 { color: $success; }
    ManyCurve > .many-curve--run3 { color: $error; }
    ManyCurve > .many-curve--several { color: $text; text-style: bold; }
    ManyCurve > .many-curve--here { background: $panel; }
    ManyCurve > .many-curve--label { color: $text-muted; }
    """
    COMPONENT_CLASSES = {*_STYLES, "many-curve--several", "many-curve--here", "many-curve--label"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.series: list[list[int | None]] = []
        self.here = 0

    def set_points(self, series: list[list[int | None]]) -> None:
        """Prompt tokens of each run (the reference first) at each aligned row (None: no step there)."""
        self.series = series
        self.refresh()

    def set_here(self, row: int) -> None:
        self.here = row
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        label = self.get_component_rich_style("many-curve--label")
        most = max((value for values in self.series for value in values if value is not None), default=0)
        if y == 0:
            marks = " ".join(("R " if run == 0 else "") + mark(run) for run in range(len(self.series)))
            text = f"context: {marks} (◉ several) · top {most:,} tokens" if most else "context: computing…"
            return Strip([Segment(text[:width], label)], min(len(text), width))
        rows = self.size.height - 1
        level = rows - y  # 1 at the bottom line .. rows at the top
        count = max((len(values) for values in self.series), default=0)
        wide = min(width, count)
        if not wide or not most:
            return Strip([], 0)
        placed = [columns(values, wide) if values else [None] * wide for values in self.series]
        here_column = self.here * wide // count
        segments = []
        for column in range(wide):
            at = [run for run, values in enumerate(placed)
                  if values[column] is not None and max(1, round((values[column] or 0) / most * rows)) == level]
            if not at:
                text, style = " ", "many-curve--label"
            elif len(at) > 1:
                text, style = "◉", "many-curve--several"
            else:
                text, style = mark(at[0]), _STYLES[0] if at[0] == 0 else _STYLES[1 + (at[0] - 1) % (len(_STYLES) - 1)]
            rich_style = self.get_component_rich_style(style)
            if column == here_column:
                rich_style += self.get_component_rich_style("many-curve--here")
            segments.append(Segment(text, rich_style))
        return Strip(segments, wide)
