"""The model output pane: the transcript of the session (SPEC §10.1).

Children are assistant messages, command blocks and notes. The widget count is bounded:
on long sessions the oldest children are removed (the trajectory file keeps everything),
and those well above the end let go of their rendered lines (`render_cache`).
Once its content overflows it is anchored to its end: it follows new content while the
user has not scrolled up, and follows again once they scroll back down. Textual applies
the anchor while it lays the transcript out, so a streamed answer costs one frame per
update, not a frame for the new text and another for the scroll. (Anchored before it
overflows, Textual would push short content to the bottom.)

While it follows its end, only its latest children are laid out: those that fill
`FOLLOW_VIEWS` heights of its view. The older ones stay mounted but hidden, and a line at
the top says how many there are. Textual lays out every shown widget on each layout (a
streamed token, the split's key, a resize), and a full transcript of 300 children took
0.4-0.7 s a layout (bench B16). Scrolling up to the top shows `REVEAL` more, with the view
kept where it was; `home` shows them all. They are hidden again once the transcript follows
its end and something new arrives.
"""

from __future__ import annotations

import weakref
from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from ..kit.pacing import pacing_of
from .assistant_message import AssistantMessage
from .command_block import CommandBlock
from .note import Note
from .render_cache import release_render_caches

MAX_CHILDREN = 300
RENDERED_CHILDREN = 8
"""Children further back than this drop their rendered lines (drawn again when scrolled to)."""
FOLLOW_VIEWS = 2
"""While it follows its end, the transcript shows the latest children that fill this many
heights of its view (at least `MIN_SHOWN` of them)."""
MIN_SHOWN = 4
REVEAL = 20
"""How many hidden children scrolling up to the top shows."""
QUIET_S = 1.0
"""The collection of children let go (`pacing.long_lived`) waits until no key came for this long."""


class Earlier(Static):
    """The line at the top of a transcript whose older children are hidden."""

    DEFAULT_CSS = """
    Earlier { display: none; color: $text-muted; text-style: italic; padding: 0 1; }
    """

    def say(self, hidden: int) -> None:
        self.display = hidden > 0
        if hidden:
            self.update(f"▲ {hidden:,} earlier: scroll up to show them, home for all")


class Transcript(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    Transcript { background: $background; padding: 0 1; border: round $panel; }
    Transcript:focus { border: round $primary; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "model"
        self.current: AssistantMessage | None = None
        self.commands: dict[str, CommandBlock] = {}
        self.earlier = Earlier(markup=False)
        self._hidden = 0
        self._keep: tuple[Widget, float] | None = None
        """An item shown before a reveal and its place in the view, kept there once laid out."""
        self._collecting = False
        self._leaving: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Items let go whose removal has not happened yet (Textual removes them later)."""

    def compose(self) -> ComposeResult:
        yield self.earlier

    @property
    def hidden(self) -> int:
        """How many of the oldest items are hidden (the line at the top counts them)."""
        return self._hidden

    @hidden.setter
    def hidden(self, count: int) -> None:
        self._hidden = count
        self.earlier.say(count)

    @property
    def items(self) -> list[Widget]:
        """The messages, command blocks and notes, oldest first (not those being removed)."""
        leaving = self._leaving
        return [child for child in self.children[1:] if child not in leaving] if leaving else list(self.children[1:])

    async def add(self, widget: Widget) -> Widget:
        """Mount `widget` at the end; once laid out, a transcript that follows its end folds
        (`watch_virtual_size`)."""
        await self.mount(widget)
        self._prune()
        if len(self.children) > RENDERED_CHILDREN + 1:
            release_render_caches(self.children[-RENDERED_CHILDREN - 1])  # each child once, as it passes
        return widget

    def _fold_if_following(self) -> None:
        if self.is_vertical_scroll_end and self.max_scroll_y > 0:
            self._fold()

    def _fold(self) -> None:
        """Hide the items above the latest `FOLLOW_VIEWS` views' worth (the transcript follows its end)."""
        if not self.size.height:  # not laid out: nothing to measure the views by
            return
        items = self.items
        budget, height, shown = FOLLOW_VIEWS * self.size.height, 0, 0
        for item in reversed(items[self.hidden:]):
            if height >= budget and shown >= MIN_SHOWN:
                break
            height += item.virtual_region_with_margin.height  # 0 for one not laid out yet
            shown += 1
        fold = len(items) - shown
        if fold > self.hidden:
            for item in items[:fold]:
                if item.display:
                    item.display = False
            self.hidden = fold
            pacing_of(self.app).long_lived.settled()  # its children outlive many collections (bench B16)

    def reveal(self, count: int | None = None) -> None:
        """Show `count` more of the hidden items, keeping the view where it is; all of them
        when None (for `home`, which goes to the top)."""
        if not self.hidden:
            return
        items = self.items
        start = 0 if count is None else max(0, self.hidden - count)
        if count is not None:
            first = items[self.hidden]
            self._keep = (first, first.virtual_region.y - self.scroll_y)
        for item in items[start:self.hidden]:
            item.display = True
        self.hidden = start

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self.hidden:  # scrolled up to the top: show some more
            self.reveal(REVEAL)

    def action_scroll_home(self) -> None:
        self.reveal()
        super().action_scroll_home()

    async def begin_message(self, step: int) -> AssistantMessage:
        self.current = AssistantMessage(step)
        await self.add(self.current)
        return self.current

    async def discard_message(self) -> None:
        """A retried query leaves nothing behind (SPEC §4.3)."""
        if self.current is not None:
            await self.current.remove()
            self.current = None

    async def add_command(self, action_id: str, command: str, state: str) -> CommandBlock:
        block = CommandBlock(action_id, command, state)
        self.commands[action_id] = block
        await self.add(block)
        return block

    async def add_note(self, text: str, kind: str = "info", label: str = "") -> Note:
        note = Note(text, kind, label)
        await self.add(note)
        return note

    def watch_virtual_size(self) -> None:
        """The content grew (a message, a Markdown block that finished mounting): anchor once
        it overflows. Checked on every change of size, never once per batch of events, since
        a Markdown answer lays out its blocks after the batch that added it has drawn."""
        if not self.is_anchored:
            self.call_after_refresh(self._anchor_if_overflowing)  # sizes are settled after the frame
        self.call_after_refresh(self._fold_if_following)  # a new child, or a grown one, has its height now
        if self._keep is not None:  # laid out after a reveal: the item that was in view stays in place
            item, place = self._keep
            self._keep = None
            if item.parent is self:
                self.scroll_to(y=item.virtual_region.y - place, animate=False, immediate=True)

    def on_resize(self) -> None:
        if not self.is_anchored:  # a smaller pane can make the same content overflow
            self.call_after_refresh(self._anchor_if_overflowing)

    def _anchor_if_overflowing(self) -> None:
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def _prune(self) -> None:
        items = self.items
        extra = len(items) - MAX_CHILDREN
        if extra <= 0:
            return
        old = items[:extra]
        self.hidden = max(0, self.hidden - extra)
        pacing_of(self.app).long_lived.released(len(old))
        for widget in old:
            self._leaving.add(widget)
            if isinstance(widget, CommandBlock):
                self.commands.pop(widget.action_id, None)
        self.remove_children(old)
        if pacing_of(self.app).long_lived.due and not self._collecting:
            self._collecting = True
            self.set_timer(QUIET_S, self._collect_when_quiet)

    def _collect_when_quiet(self) -> None:
        """Free the children let go (a walk of the whole heap: `long_lived`) once no key came
        for `QUIET_S`, or at once when so many wait that memory would grow."""
        pacing = pacing_of(self.app)
        left = pacing.quiet.idle_left(QUIET_S)
        if left > 0 and not pacing.long_lived.overdue:
            self.set_timer(left, self._collect_when_quiet)  # looked at again once it may be quiet
            return
        self._collecting = False
        if pacing.long_lived.due:
            pacing.long_lived.collect()
