"""The context-budget meter (SPEC §10.1, §5): used / window, % left, cached, next ≈ N; the
same widget in the live app and in replay (where it shows the selected step's figures).

Coloured by how much is left: ok above `WARN_BELOW` percent, warning above
`DANGER_BELOW`, danger under it; "unknown window" when the window size is not known.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from swedeck.core.events import ContextStatus

from .text import literal

WARN_BELOW = 50.0
DANGER_BELOW = 20.0
BAR_WIDTH = 16


def meter_level(status: ContextStatus | None) -> str:
    left = status.left_percent if status else None
    if left is None:
        return "unknown"
    if left < DANGER_BELOW:
        return "danger"
    if left < WARN_BELOW:
        return "warn"
    return "ok"


def describe(status: ContextStatus | None, processors: list[str] | None, notes: list[str] = ()) -> str:
    """The meter's line; `processors` None leaves them out (replay), `notes` come last."""
    status = status or ContextStatus(window=None, prompt_tokens=None)
    used = "–" if status.prompt_tokens is None else f"{status.prompt_tokens:,}"
    if status.estimated and status.prompt_tokens is not None:
        used += " (estimated)"  # the provider sent no usage: swedeck's own count
    if status.window:
        parts = [f"context {used} / {status.window:,}"]
        left = status.left_percent
        if left is not None:
            parts.append(f"{left:.0f}% left")
    else:
        parts = [f"context {used} / unknown window"]
    if status.cached_tokens:
        parts.append(f"cached {status.cached_tokens:,}")
    if status.next_estimate is not None:
        # anchored: the provider's last figure plus the local difference; else a local count only
        parts.append(f"next ≈ {status.next_estimate:,}" + ("" if status.next_anchored else " (local count)"))
    if processors is not None:
        parts.append("processors: " + (", ".join(processors) if processors else "none"))
    if status.advice:
        parts.append(status.advice)
    return " · ".join([*parts, *notes])


def bar(status: ContextStatus | None) -> str:
    if not status or not status.window:
        return "░" * BAR_WIDTH
    used = min(1.0, (status.prompt_tokens or 0) / status.window)
    filled = round(used * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


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

    def __init__(self, **kwargs) -> None:
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
