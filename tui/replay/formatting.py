"""Search matches marked in the replay's panes (the step's text itself is the core's:
`replay.step_text`; the meter's figures: `meter`)."""

from __future__ import annotations

from textual.content import Content, Span

from swedeck.core.text import visible

from ..widgets.text import MAX_MARKS


def highlighted(text: str, query: str) -> Content:
    """Literal text with the first `MAX_MARKS` matches of the search marked (never parsed as
    markup, controls visible), in one pass."""
    text = visible(text)
    if not query:
        return Content(text)
    lower, needle = text.casefold(), query.casefold()
    if len(lower) != len(text) or not needle:
        return Content(text)
    spans: list[Span] = []
    start = lower.find(needle)
    while start != -1 and len(spans) < MAX_MARKS:
        spans.append(Span(start, start + len(needle), "reverse bold"))
        start = lower.find(needle, start + len(needle))
    return Content(text, spans)
