"""A long streamed answer is cut into Markdown pages only where the cut cannot change how it
renders (bench B1: the cost of a frame stays that of the last page)."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from swedeck.tui.widgets.assistant_message import PAGE_CHARS, AssistantMessage
from swedeck.tui.widgets.markdown_pages import PageSplitter

PARAGRAPH = "The parser reads each line and returns a token, so we check the value first.\n"
BLOCKS = [
    PARAGRAPH * 3,
    "## A heading\n",
    "- one item\n- another item\n\n    continued inside the item\n",
    "1. first\n2. second\n",
    "```python\ndef f():\n\n    return 1\n\n\n```\n",
    "~~~~\nnot a fence end: ```\n\n~~~~\n",
    "    indented code\n\n    more of it\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "> quoted\n>\n> still quoted\n",
]


def document(indexes: list[int]) -> str:
    return "\n".join(BLOCKS[i] for i in indexes)


def chunked(text: str, sizes: list[int]) -> list[str]:
    out, start = [], 0
    for size in sizes:
        if start >= len(text):
            break
        out.append(text[start:start + size])
        start += size
    out.append(text[start:])
    return out


def pages_of(text: str, chunks: list[str], page_chars: int) -> list[str]:
    splitter = PageSplitter(page_chars)
    pages = [""]
    for chunk in chunks:
        first, *later = splitter.feed(chunk)
        pages[-1] += first
        pages.extend(later)
    return pages


def inside_fence(text: str) -> bool:
    fence = None
    for line in text.splitlines():
        match = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if not match:
            continue
        marker = match.group(1)
        if fence is None:
            fence = marker
        elif marker[0] == fence[0] and len(marker) >= len(fence) and not line[match.end():].strip():
            fence = None
    return fence is not None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, len(BLOCKS) - 1), min_size=1, max_size=30),
       st.lists(st.integers(1, 40), max_size=200), st.integers(1, 400))
def test_pages_hold_the_text_and_cut_only_at_safe_block_starts(indexes, sizes, page_chars):
    text = document(indexes)
    pages = pages_of(text, chunked(text, sizes), page_chars)
    assert "".join(pages) == text
    assert pages == pages_of(text, [text], page_chars)  # how the text arrived does not matter
    for before, page in itertools.pairwise(pages):
        assert len(before) >= page_chars
        assert before.endswith("\n\n") or before.endswith("\n\n\n")
        assert page and not page[0].isspace()
    done = ""
    for page in pages[:-1]:
        done += page
        assert not inside_fence(done)


def test_a_short_answer_is_one_page():
    text = document([0, 1, 4, 2])
    assert pages_of(text, [text], PAGE_CHARS) == [text]


class OneMessage(App):
    CSS = "VerticalScroll { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="live"):
            yield AssistantMessage(step=1)
        with VerticalScroll():
            yield Markdown(id="whole")

    def on_mount(self) -> None:
        self.query_one("#live").anchor()  # follows the stream, as the transcript does


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_pages_take_the_lines_one_markdown_takes(anyio_backend):
    # No extra blank lines where one page ends and the next begins.
    text = "\n".join([PARAGRAPH * 3] * 40)
    app = OneMessage()
    async with app.run_test(size=(100, 40)) as pilot:
        message = app.query_one(AssistantMessage)
        await message.append("text", text)
        whole = app.query_one("#whole", Markdown)
        await whole.update(text)
        await pilot.pause()
        pages = list(message.query(".answer").results(Markdown))
        assert len(pages) > 2
        span = pages[-1].virtual_region.bottom - pages[0].virtual_region.y
        assert span == whole.virtual_region.height


def blocks(widget) -> list[tuple[str, str]]:
    return [(type(block).__name__, (block.source or "").strip())
            for block in widget.query(MarkdownBlock) if block.parent is not None and isinstance(block.parent, Markdown)]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_paged_answer_renders_the_same_blocks_as_one_markdown(anyio_backend):
    text = document([0, 1, 4, 0, 2, 0, 5, 7, 0, 8, 6, 0, 3, 0] * 16)
    assert len(text) > 3 * PAGE_CHARS
    app = OneMessage()
    async with app.run_test(size=(100, 40)) as pilot:
        message = app.query_one(AssistantMessage)
        for i, chunk in enumerate(chunked(text, [70, 130, 1, 900, 310] * 40)):
            await message.append("text", chunk)
            if i % 2 == 0:
                await pilot.pause()  # a frame: what streams past is rendered
        await message.finish(text, None)
        whole = app.query_one("#whole", Markdown)
        await whole.update(text)
        await pilot.pause()
        pages = message.query(".answer").results(Markdown)
        assert len(list(pages)) >= 3
        assert "".join(message.text_sources) == text
        assert blocks(message) == blocks(whole)

        # Pages above the last two were released from the render caches; those out of view
        # stay released, and render again once shown.
        pages = list(message.query(".answer").results(Markdown))
        hidden = pages[1]
        assert len(pages) > 4 and hidden.region.bottom <= 0  # scrolled out of the top
        hidden_blocks = list(hidden.query(MarkdownBlock))
        assert all(not block._render_cache.lines for block in hidden_blocks)
        hidden.scroll_visible(animate=False, top=True)
        await pilot.pause()
        await pilot.pause()
        shown = [block for block in hidden_blocks if 0 <= block.region.y < 20]
        assert shown and all(block._render_cache.lines for block in shown)
        assert any("The parser reads each line" in strip.text for block in shown for strip in block._render_cache.lines)
