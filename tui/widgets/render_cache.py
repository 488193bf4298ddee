"""Letting go of the cached rendering of what is out of view (bench B1).

Textual keeps every widget's rendered lines (`Strip`s, each with seven small caches) for as
long as the widget lives, whether it is on screen or not. In a long transcript those
objects are most of the heap, and a full garbage collection walks all of them with the GIL
held, for longer the longer the answer (bench B1, docs/performance.md), and far shorter
once the off-screen lines are dropped. A released widget renders again when it is next shown.

This reaches into two private attributes of `textual.widget.Widget` (`_render_cache`,
which `refresh()` leaves in place, and its type); textual is pinned below 8.3 and
`tests/test_markdown_pages.py` checks the release still frees the lines.
"""

from __future__ import annotations

from textual.geometry import NULL_SIZE
from textual.widget import Widget, _RenderCache


def release_render_caches(widget: Widget) -> None:
    """Forget the rendered lines of `widget` and everything inside it."""
    for node in widget.walk_children(with_self=True):
        if isinstance(node, Widget):
            node.refresh()  # clears the styles cache and marks the whole widget for a re-render
            node._render_cache = _RenderCache(NULL_SIZE, [])
