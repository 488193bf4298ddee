"""One assistant message, streamed as it arrives (SPEC §10.1, §10.3).

Text and reasoning are appended through `Markdown.get_stream()`, which batches fragments
and only re-parses the tail of the document: a long answer is never re-rendered whole per
token. Reasoning sits in a foldable, dimmed section. Tool-call argument fragments are
shown as a plain preview until the parsed command arrives as a command block.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from .text import literal


class AssistantMessage(Vertical):
    DEFAULT_CSS = """
    AssistantMessage { height: auto; margin: 0 0 1 0; }
    AssistantMessage .step-label { color: $text-muted; text-style: italic; }
    AssistantMessage Collapsible { display: none; padding: 0; margin: 0; border: none; background: transparent; }
    AssistantMessage Collapsible.-has-reasoning { display: block; }
    AssistantMessage .reasoning { color: $text-muted; text-style: italic; background: transparent; }
    AssistantMessage .answer { background: transparent; margin: 0; }
    AssistantMessage .tool-preview { display: none; color: $text-muted; }
    AssistantMessage .tool-preview.-active { display: block; }
    """

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step
        self._streams: dict[str, MarkdownStream] = {}
        self._received = {"text": "", "reasoning": ""}
        self._tool_preview = ""

    def compose(self) -> ComposeResult:
        yield Static(literal(f"step {self.step}"), classes="step-label")
        with Collapsible(title="reasoning", collapsed=False):
            yield Markdown(classes="reasoning")
        yield Markdown(classes="answer")
        yield Static(classes="tool-preview", markup=False)

    def _markdown(self, kind: str) -> Markdown:
        return self.query_one(".reasoning" if kind == "reasoning" else ".answer", Markdown)

    async def append(self, kind: str, text: str) -> None:
        if kind == "tool_call":
            self._tool_preview += text
            preview = self.query_one(".tool-preview", Static)
            preview.add_class("-active")
            tail = self._tool_preview[-400:]
            preview.update(literal(f"⋯ tool call {tail}"))
            return
        if kind == "reasoning":
            self.query_one(Collapsible).add_class("-has-reasoning")
        self._received[kind] += text
        stream = self._streams.get(kind)
        if stream is None:
            stream = self._streams[kind] = Markdown.get_stream(self._markdown(kind))
        await stream.write(text)

    async def finish(self, text: str, reasoning: str | None) -> None:
        """The full message: fill in what did not stream (non-streaming models) and fold."""
        for stream in self._streams.values():
            await stream.stop()
        self._streams.clear()
        if text and not self._received["text"]:
            await self._markdown("text").update(text)
        if reasoning and not self._received["reasoning"]:
            self.query_one(Collapsible).add_class("-has-reasoning")
            await self._markdown("reasoning").update(reasoning)
        self.query_one(".tool-preview", Static).remove_class("-active")
        if self._received["reasoning"] or reasoning:
            self.query_one(Collapsible).collapsed = True

    async def cancel(self) -> None:
        for stream in self._streams.values():
            await stream.stop()
        self._streams.clear()
