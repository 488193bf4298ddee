"""The model output pane: the transcript of the session (SPEC §10.1).

Children are assistant messages, command blocks and notes. The widget count is bounded:
on long sessions the oldest children are removed (the trajectory file keeps everything),
and those well above the end let go of their rendered lines (`render_cache`).
Once its content overflows it is anchored to its end: it follows new content while the
user has not scrolled up, and follows again once they scroll back down. Textual applies
the anchor while it lays the transcript out, so a streamed answer costs one frame per
update, not a frame for the new text and another for the scroll. (Anchored before it
overflows, Textual would push short content to the bottom.)
"""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from .assistant_message import AssistantMessage
from .command_block import CommandBlock
from .note import Note
from .render_cache import release_render_caches

MAX_CHILDREN = 300
RENDERED_CHILDREN = 8
"""Children further back than this drop their rendered lines (drawn again when scrolled to)."""


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

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget)
        self._prune()
        if len(self.children) > RENDERED_CHILDREN:
            release_render_caches(self.children[-RENDERED_CHILDREN - 1])  # each child once, as it passes
        return widget

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
        if not self._anchored:
            self.call_after_refresh(self._anchor_if_overflowing)  # sizes are settled after the frame

    def on_resize(self) -> None:
        if not self._anchored:  # a smaller pane can make the same content overflow
            self.call_after_refresh(self._anchor_if_overflowing)

    def _anchor_if_overflowing(self) -> None:
        if not self._anchored and self.max_scroll_y > 0:
            self.anchor()

    def _prune(self) -> None:
        extra = len(self.children) - MAX_CHILDREN
        if extra <= 0:
            return
        old = list(self.children[:extra])
        for widget in old:
            if isinstance(widget, CommandBlock):
                self.commands.pop(widget.action_id, None)
        self.remove_children(old)
