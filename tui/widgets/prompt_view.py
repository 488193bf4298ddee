"""A prompt, message by message, as the model got it (SPEC §10.5, §11.2): role, type, tokens,
whether a processor changed it, its cache mark, its text and tool calls, shown literally.
Both inspectors use it: the live one (what the model gets next) and replay's (what it got
at a step)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from swedeck.core.messages import Message

from .text import literal

PREVIEW_CHARS = 1200


def message_text(message: Message) -> str:
    text = message.text
    for call in message.tool_calls or ():
        text += f"\n→ {call.function.name}({call.function.arguments})"
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + f"\n… ({len(text) - PREVIEW_CHARS:,} more characters, not shown here)"
    return text


def has_cache_mark(message: Message) -> bool:
    if message.cache_control:
        return True
    return isinstance(message.content, list) and any(
        isinstance(part, dict) and part.get("cache_control") for part in message.content)


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
        marks = (" · changed by processors" if self.edited else "") + (" · cache mark" if has_cache_mark(self.message) else "")
        kind = self.message.message_type.value
        yield Static(literal(f"#{self.index} {self.message.role} · {kind} · {self.tokens:,} tokens{marks}"),
                     classes="meta", markup=False)
        yield Static(literal(message_text(self.message)), markup=False)


class PromptView(VerticalScroll):
    """The messages of one prompt (`prompt_view.PromptLine`s), with any processor errors first."""

    DEFAULT_CSS = """
    PromptView { height: 1fr; }
    PromptView .prompt-error { color: $error; }
    """

    def __init__(self, lines: Iterable[Any], errors: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines = list(lines)
        self.errors = list(errors)

    def compose(self) -> ComposeResult:
        for error in self.errors:
            yield Static(literal(f"processor error: {error}"), classes="prompt-error", markup=False)
        for index, line in enumerate(self.lines):
            yield PromptMessage(index, line.message, line.tokens, line.changed)
