"""Two runs' context sizes in one chart: A `●`, B `○`, `◉` where they meet, over the aligned
steps (a step one run lacks leaves its mark out), with the scale on the first line."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from .many_curve import columns as _columns_of


class DualCurve(Widget):
    DEFAULT_CSS = """
    DualCurve { height: 4; padding: 0 1; }
    DualCurve > .dual-curve--a { color: $accent; }
    DualCurve > .dual-curve--b { color: $warning; }
    DualCurve > .dual-curve--both { color: $success; text-style: bold; }
    DualCurve > .dual-curve--here { background: $panel; }
    DualCurve > .dual-curve--label { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"dual-curve--a", "dual-curve--b", "dual-curve--both", "dual-curve--here", "dual-curve--label"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.a: list[int | None] = []
        self.b: list[int | None] = []
        self.here = 0

    def set_points(self, a: list[int | None], b: list[int | None]) -> None:
        """Prompt tokens of A and of B at each aligned row (None: that run has no step there)."""
        self.a, self.b = a, b
        self.refresh()

    def set_here(self, row: int) -> None:
        self.here = row
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        label = self.get_component_rich_style("dual-curve--label")
        most = max([v for v in (*self.a, *self.b) if v is not None], default=0)
        if y == 0:
            text = f"context: A ● B ○ (◉ both) · top {most:,} tokens" if most else "context: computing…"
            return Strip([Segment(text[:width], label)], min(len(text), width))
        rows = self.size.height - 1
        level = rows - y  # 1 at the bottom line .. rows at the top
        count = max(len(self.a), len(self.b))
        columns = min(width, count) if count else 0
        a = _columns_of(self.a, columns) if self.a and columns > 0 else []
        b = _columns_of(self.b, columns) if self.b and columns > 0 else []
        here_column = self.here * columns // count if count else -1
        segments = []
        for column in range(columns):
            def at(values: list[int | None], column: int = column) -> bool:
                value = values[column] if column < len(values) else None
                return value is not None and most > 0 and max(1, round(value / most * rows)) == level
            in_a, in_b = at(a), at(b)
            mark, style = (("◉", "dual-curve--both") if in_a and in_b else ("●", "dual-curve--a") if in_a
                           else ("○", "dual-curve--b") if in_b else (" ", "dual-curve--label"))
            rich_style = self.get_component_rich_style(style)
            if column == here_column:
                rich_style += self.get_component_rich_style("dual-curve--here")
            segments.append(Segment(mark, rich_style))
        return Strip(segments, columns)
