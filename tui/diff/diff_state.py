"""What the diff view shows, as Textual vars: the state, without a widget (the live and
replay views' pattern), tested without an app (tests/test_view_states.py). The header binds
to `header`, computed from the vars below."""

from __future__ import annotations

from textual.reactive import var

from ..shared.browse_state import BrowseState


class DiffState(BrowseState):
    row: var[int] = var(0, init=False)
    """The aligned row shown (0-based; the search and go-to number rows from 1)."""
    rows: var[int] = var(0)
    """How many aligned rows the two runs have."""
    names: var[tuple[str, str]] = var(("", ""))
    """The two runs' names, A then B."""
    first_divergence: var[int | None] = var(None)
    """The step of A where the runs first part; None: they never do."""
    header: var[str] = var("")

    def compute_header(self) -> str:
        parts = [f"A {self.names[0]} ↔ B {self.names[1]}", f"row {self.row + 1}/{self.rows}",
                 "the runs never part" if self.first_divergence is None
                 else f"first divergence: step {self.first_divergence} of A"]
        if self.search_text:
            parts.append(f"/{self.search_text}: {len(self.matches)} rows" + (" (searching…)" if self.searching else ""))
        return " · ".join(parts)
