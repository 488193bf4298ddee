"""Text shown literally with marks: the search's matches (replay and diff), and the lines one
run has that the other lacks (diff). The step's text itself is the core's
(`replay.step_text`)."""

from __future__ import annotations

from textual.content import Content, Span

from swedeck.core.text import visible

from ..widgets.text import MAX_MARKS

CHANGED = "bold underline"
FOUND = "reverse bold"


def highlighted(text: str, query: str, lines: frozenset[int] = frozenset()) -> Content:
    """Literal text (never parsed as markup, controls visible) with the lines numbered in
    `lines` set apart and the first `MAX_MARKS` matches of `query` marked, in one pass."""
    text = visible(text)
    spans: list[Span] = []
    if lines:
        position = 0
        for number, line in enumerate(text.split("\n")):
            if number in lines and line:
                spans.append(Span(position, position + len(line), CHANGED))
            position += len(line) + 1
    lower, needle = text.casefold(), query.casefold()
    if needle and len(lower) == len(text):  # a fold that changes lengths would misplace the marks
        found = 0
        start = lower.find(needle)
        while start != -1 and found < MAX_MARKS:
            spans.append(Span(start, start + len(needle), FOUND))
            found += 1
            start = lower.find(needle, start + len(needle))
    return Content(text, spans)
