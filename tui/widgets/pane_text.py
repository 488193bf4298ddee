"""A pane's text that changes with every step (the replay's model output and its commands).

Textual lays the screen out again whenever a widget's virtual size changes, and a reflow sets
each widget's virtual size to what that same reflow just measured: a `Static` whose text
grew or shrank asked for a second layout, and a second and third frame, for each step
(issue 49: a key's paint waits behind the frames of the key before it). `PaneText` takes
its new size in the reflow that placed it, without asking for another: nothing else lays
out by a `Static`'s virtual size. It reaches into `Widget._size_updated`
(docs/private-apis.md).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import Static


class PaneText(Static):
    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)
