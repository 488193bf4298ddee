"""The replay's step list (SPEC §11.1): one line per step, `number command`, drawn only where
it is on screen.

A 5,000-step trajectory made an `OptionList` measure 5,000 options (three times: when they
are added, when the width settles, when the commands arrive) before the first frame. Here
a step is a line: the list knows how many there are, draws the lines in view, and takes a
step's command whenever it becomes known, redrawing that line alone.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from swedeck.core.cost import money
from swedeck.core.text import one_line

from .text import clean_output


class StepList(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    StepList { background: $surface; }
    StepList > .step-list--highlight { background: $block-cursor-background; color: $block-cursor-foreground; }
    StepList:blur > .step-list--highlight { background: $block-cursor-blurred-background; }
    """
    COMPONENT_CLASSES = {"step-list--highlight"}
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move_to(0)", "First", show=False),
        Binding("end", "move_to(-1)", "Last", show=False),
    ]

    class Highlighted(Message):
        """The person moved to a step (keys or mouse): `index` is 0-based."""

        def __init__(self, step_list: StepList, index: int) -> None:
            super().__init__()
            self.step_list = step_list
            self.index = index

        @property
        def control(self) -> StepList:
            return self.step_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.count = 0
        self.commands: dict[int, str] = {}
        """Step number (1-based) -> its first command, as they become known."""
        self.costs: dict[int, float] = {}
        """Step number -> its dollars, where priced (issue 65): a column at the line's end."""
        self.highlighted: int | None = None
        self.from_end = False
        """Number the steps from the end (-1 the last): a large file's last steps, while the whole is read."""

    # --- content --------------------------------------------------------------------------

    def set_count(self, count: int) -> None:
        self.count = count
        self.virtual_size = Size(0, count)  # its lines are cut to its width: it never scrolls sideways
        if self.highlighted is not None and self.highlighted >= count:
            self.highlighted = count - 1 if count else None
        self.refresh()

    def clear(self) -> None:
        self.commands, self.costs = {}, {}
        self.from_end = False
        self.highlighted = None
        self.set_count(0)

    def set_commands(self, commands: dict[int, str], costs: dict[int, float] | None = None) -> None:
        self.commands.update(commands)
        self.costs.update(costs or {})
        top = self.scroll_offset.y
        # the lines in view, not the batch, looked through (a batch of the token curve's worker is
        # thousands of steps: `size` per step was 40 ms of the UI's thread, keys waiting behind it)
        if any(step in commands or step in (costs or {}) for step in range(top + 1, top + self.size.height + 1)):
            self.refresh()

    def highlight(self, index: int) -> None:
        """Show step `index` (0-based) as the current one, scrolled into view; no message."""
        if not self.count:
            return
        index = min(max(index, 0), self.count - 1)
        previous, self.highlighted = self.highlighted, index
        self.scroll_to_region(Region(0, index, 1, 1), animate=False, force=True)
        for line in (previous, index):
            if line is not None:
                self.refresh_line(line)

    def label(self, number: int, width: int = 23) -> str:
        """`number command`, and the step's dollars at the end where they are known and fit."""
        shown = number - self.count - 1 if self.from_end else number
        command = clean_output(self.commands.get(number, ""))
        cost = self.costs.get(number)
        if cost is None or width < 20:
            return f"{shown:>4} {one_line(command, 18) or 'step'}"
        dollars = money(cost)
        text = f"{shown:>4} {one_line(command, min(18, width - 6 - len(dollars))) or 'step'}"
        return f"{text:<{width - len(dollars)}}{dollars}"

    # --- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.size.width
        if index >= self.count:
            return Strip.blank(width, self.rich_style)
        style: Style = self.rich_style
        if index == self.highlighted:
            style = style + self.get_component_rich_style("step-list--highlight")
        shown = self.scrollable_content_region.width or width  # the scrollbar, where there is one, covers the rest
        text = self.label(index + 1, shown)[:width].ljust(width)
        return Strip([Segment(text, style)], width)

    def refresh_line(self, index: int) -> None:
        y = index - self.scroll_offset.y
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    # --- the person -------------------------------------------------------------------------

    def _choose(self, index: int) -> None:
        if not self.count:
            return
        index = min(max(index, 0), self.count - 1)
        if index != self.highlighted:
            self.highlight(index)
            self.post_message(self.Highlighted(self, index))

    def action_move(self, delta: int) -> None:
        self._choose((self.highlighted or 0) + delta)

    def action_page(self, direction: int) -> None:
        self._choose((self.highlighted or 0) + direction * max(1, self.size.height - 1))

    def action_move_to(self, index: int) -> None:
        self._choose(self.count - 1 if index < 0 else index)

    def on_click(self, event: events.Click) -> None:
        self._choose(self.scroll_offset.y + event.y)
