"""The context-budget meter (SPEC §10.1, §5): used / window, % left, cached, next ≈ N; the
same widget in the live app and in replay (where it shows the selected step's figures).

Coloured by how much is left: ok above `WARN_BELOW` percent, warning above
`DANGER_BELOW`, danger under it; "unknown window" when the window size is not known.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from swedeck.core.context_status import ContextStatus
from swedeck.core.meter import bar, describe, meter_level

from .text import literal


class ContextMeter(Static):
    DEFAULT_CSS = """
    ContextMeter { height: 1; padding: 0 1; background: $panel; color: $foreground; }
    ContextMeter.-ok { color: $success; }
    ContextMeter.-warn { color: $warning; }
    ContextMeter.-danger { color: $error; text-style: bold; }
    ContextMeter.-unknown { color: $text-muted; }
    """

    status: reactive[ContextStatus | None] = reactive(None, always_update=True)
    processors: reactive[list[str] | None] = reactive(list, always_update=True)
    notes: reactive[list[str]] = reactive(list, always_update=True)
    """Said after the figures: replay's "recorded" and the step's cost."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)

    def on_mount(self) -> None:
        self._draw()

    def watch_status(self) -> None:
        self._draw()

    def watch_processors(self) -> None:
        self._draw()

    def watch_notes(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        self.set_classes(f"-{meter_level(self.status)}")
        self.update(Content.assemble(bar(self.status), " ",
                                     literal(describe(self.status, self.processors, self.notes))))
