"""One assistant message, streamed as it arrives (SPEC §10.1, §10.3).

The screen hands over the text that arrived since its last drain (a few times a second,
see `SessionScreen`), and `Markdown.append` re-parses only the tail of the document, so a
long answer is never re-rendered whole. A long answer streams into a sequence of Markdown
pages cut at block boundaries (`markdown_pages`), so a frame lays out only the last page,
however long the answer grows. Reasoning sits in a foldable, dimmed section. Tool-call
argument fragments are shown as a plain preview until the parsed command arrives as a
command block.
"""

from __future__ import annotations

import asyncio

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Markdown, Static

from .markdown_pages import PageSplitter
from .render_cache import release_render_caches
from .text import literal

PAGE_CHARS = 4_000
SHOWN_PAGES = 2
"""Pages further up than this are released from the render caches when a new page starts."""


READY_TIMEOUT_S = 10.0


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
        self._pages: dict[str, Markdown] = {}  # the page each kind streams into now
        self._splitters = {"text": PageSplitter(PAGE_CHARS), "reasoning": PageSplitter(PAGE_CHARS)}
        self._received = {"text": False, "reasoning": False}  # did any of it stream?
        self._tool_preview = ""
        self._ready = asyncio.Event()
        """Set once its children are mounted: under load the first delta can arrive before."""

    def on_mount(self) -> None:
        self._ready.set()

    def compose(self) -> ComposeResult:
        yield Static(literal(f"step {self.step}"), classes="step-label")
        with Collapsible(title="reasoning", collapsed=False):
            yield Markdown(classes="reasoning")
        yield Markdown(classes="answer")
        yield Static(classes="tool-preview", markup=False)

    def _first_page(self, kind: str) -> Markdown:
        return self.query_one(".reasoning" if kind == "reasoning" else ".answer", Markdown)

    def _page(self, kind: str) -> Markdown:
        """The page `kind` streams into now."""
        return self._pages.get(kind) or self._first_page(kind)

    @property
    def text_sources(self) -> list[str]:
        """The answer as its pages hold it (one string per page)."""
        return [page.source for page in self.query(".answer").results(Markdown)]

    async def _mounted(self) -> bool:
        """Wait (briefly) for the children; False when it was removed before it mounted."""
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT_S)
            except TimeoutError:
                return False
        return True

    async def append(self, kind: str, text: str) -> None:
        if not await self._mounted():
            return
        if kind == "tool_call":
            self._tool_preview = (self._tool_preview + text)[-400:]
            preview = self.query_one(".tool-preview", Static)
            preview.add_class("-active")
            preview.update(literal(f"⋯ tool call {self._tool_preview}"))
            return
        if kind == "reasoning":
            self.query_one(Collapsible).add_class("-has-reasoning")
        self._received[kind] = True
        first, *later = self._splitters[kind].feed(text)
        if first:
            await self._page(kind).append(first)
        for piece in later:
            previous = self._page(kind)
            page = Markdown(classes=f"{'reasoning' if kind == 'reasoning' else 'answer'} -page")
            await previous.parent.mount(page, after=previous)  # type: ignore[union-attr]
            self._pages[kind] = page
            await page.append(piece)
            self._release_pages_above(kind)

    def _release_pages_above(self, kind: str) -> None:
        pages = list(self.query("." + ("reasoning" if kind == "reasoning" else "answer")).results(Markdown))
        if len(pages) > SHOWN_PAGES:
            release_render_caches(pages[-SHOWN_PAGES - 1])

    async def finish(self, text: str, reasoning: str | None) -> None:
        """The full message: fill in what did not stream (non-streaming models) and fold."""
        if not await self._mounted():
            return
        if text and not self._received["text"]:
            await self._first_page("text").update(text)
        if reasoning and not self._received["reasoning"]:
            self.query_one(Collapsible).add_class("-has-reasoning")
            await self._first_page("reasoning").update(reasoning)
        self.query_one(".tool-preview", Static).remove_class("-active")
        if self._received["reasoning"] or reasoning:
            self.query_one(Collapsible).collapsed = True
