"""The prompt inspector (SPEC §10.5): exactly what the next query sends, after processors.

One row per message: role, type, tokens, and the text. Messages a processor changed are
marked (`edited`), the count of history messages the processors dropped is shown, and the
total is set against the window. Text is shown literally.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from swedeck.core.messages import Message

from ..widgets.text import literal

PREVIEW_CHARS = 1200


def summary(preview: Any, history_size: int) -> str:
    """The prompt against the window, with the meter's own figures (the same window, the same
    prediction): the local count of these messages, and the provider-anchored "next ≈"."""
    window = f"{preview.window:,}" if preview.window else "unknown window"
    dropped = max(0, history_size - len(preview.messages))
    status = preview.status
    expected = status.next_estimate if status and status.next_estimate is not None else preview.total
    parts = [f"{len(preview.messages)} messages", f"{preview.total:,} tokens by local count"]
    if status and status.next_anchored:
        parts.append(f"next ≈ {expected:,} / {window} by the provider's last count")
    else:
        parts.append(f"/ {window}")
    if preview.window:
        parts.append(f"{100 * expected / preview.window:.1f}% of the window")
    if dropped:
        parts.append(f"{dropped} history messages dropped by processors")
    return " · ".join(parts)


def message_text(message: Message) -> str:
    text = message.text
    for call in message.tool_calls or ():
        text += f"\n→ {call.function.name}({call.function.arguments})"
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + f"\n… ({len(text) - PREVIEW_CHARS:,} more characters, not shown here)"
    return text


class PromptMessage(Vertical):
    DEFAULT_CSS = """
    PromptMessage { height: auto; margin: 0 0 1 0; border-left: thick $panel; padding: 0 1; }
    PromptMessage.-edited { border-left: thick $warning; }
    PromptMessage .meta { color: $text-muted; text-style: bold; }
    PromptMessage.-edited .meta { color: $warning; }
    """

    def __init__(self, index: int, message: Message, tokens: int, edited: bool) -> None:
        super().__init__(classes="-edited" if edited else "")
        self.index, self.message, self.tokens, self.edited = index, message, tokens, edited

    def compose(self) -> ComposeResult:
        mark = " · edited by processors" if self.edited else ""
        kind = self.message.message_type.value
        yield Static(literal(f"#{self.index} {self.message.role} · {kind} · {self.tokens:,} tokens{mark}"),
                     classes="meta", markup=False)
        yield Static(literal(message_text(self.message)), markup=False)


class PromptInspector(ModalScreen[None]):
    CSS_PATH = "prompt_inspector.tcss"
    BINDINGS = [Binding("escape,q,t", "close", "Close", id="close_inspector")]

    def __init__(self, preview: Any, history: list[Message]) -> None:
        super().__init__()
        self.preview = preview
        self.history = history

    def compose(self) -> ComposeResult:
        with Vertical(id="inspector-box"):
            yield Label("What the model gets next (after history processors)", id="inspector-title")
            yield Static(literal(summary(self.preview, len(self.history))), id="inspector-summary", markup=False)
            for error in getattr(self.preview, "errors", []):
                yield Static(literal(f"processor error: {error}"), classes="inspector-error", markup=False)
            original = set(map(id, self.history))
            with VerticalScroll(id="inspector-messages"):
                for index, (message, tokens) in enumerate(zip(self.preview.messages, self.preview.tokens)):
                    edited = id(message) not in original and message not in self.history
                    yield PromptMessage(index, message, tokens, edited)
            yield Label("Esc closes", id="inspector-hint")

    def action_close(self) -> None:
        self.dismiss(None)
