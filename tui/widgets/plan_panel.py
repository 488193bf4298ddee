"""The agent's plan (an ACP agent's `plan` update), above the meter while it has entries:
one line each, its status as a mark, the text literal."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from swedeck.core.events import PlanEntry

from .text import literal

MARKS = {"completed": "✓", "in_progress": "▶", "pending": "·"}
SHOWN = 8
"""Entries shown at most: the first unfinished ones, with a count of the rest."""


def plan_text(entries: tuple[PlanEntry, ...]) -> str:
    done = sum(entry.status == "completed" for entry in entries)
    first = next((index for index, entry in enumerate(entries) if entry.status != "completed"), len(entries))
    start = max(0, min(first - 1, len(entries) - SHOWN))
    lines = [f"plan {done}/{len(entries)} done"]
    if start:
        lines.append(f"  … {start} before")
    lines += [f"  {MARKS.get(entry.status, '?')} {entry.content}" for entry in entries[start:start + SHOWN]]
    if start + SHOWN < len(entries):
        lines.append(f"  … {len(entries) - start - SHOWN} more")
    return "\n".join(lines)


class PlanPanel(Static):
    DEFAULT_CSS = """
    PlanPanel { height: auto; max-height: 11; padding: 0 1; border-top: solid $primary-muted; display: none; }
    PlanPanel.-shown { display: block; }
    """

    plan: reactive[tuple[PlanEntry, ...]] = reactive(tuple)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]

    def watch_plan(self, entries: tuple[PlanEntry, ...]) -> None:
        self.set_class(bool(entries), "-shown")
        self.update(literal(plan_text(entries)) if entries else "")
