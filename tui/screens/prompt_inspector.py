"""The prompt inspector (SPEC §10.5): exactly what the next query sends, after processors.

One row per message: role, type, tokens, and the text. Messages a processor changed are
marked (`edited`), the count of history messages the processors dropped is shown, and the
total is set against the window. Text is shown literally.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from swedeck.core.messages import Message

from ..widgets.prompt_view import PromptView
from ..widgets.text import literal


def summary(preview: Any, history_size: int) -> str:
    """The prompt against the window, with the meter's own figures (the same window, the same
    prediction): the local count of these messages, and the provider-anchored "next ≈"."""
    window = f"{preview.window:,}" if preview.window else "unknown window"
    dropped = max(0, history_size - len(preview.messages))
    status = preview.status
    expected = status.next_estimate if status and status.next_estimate is not None else preview.total
    parts = [f"{len(preview.messages)} messages"]
    if status and status.next_anchored:
        parts += [f"{preview.total:,} tokens by local count", f"next ≈ {expected:,} / {window} by the provider's last count"]
    else:
        parts.append(f"{preview.total:,} tokens / {window} (local count)")
    if preview.window:
        parts.append(f"{100 * expected / preview.window:.1f}% of the window")
    if dropped:
        parts.append(f"{dropped} history messages dropped by processors")
    return " · ".join(parts)


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
            yield PromptView(self.preview.lines, self.preview.errors, id="inspector-messages")
            yield Label("Esc closes", id="inspector-hint")

    def action_close(self) -> None:
        self.dismiss(None)
