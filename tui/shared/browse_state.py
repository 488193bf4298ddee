"""What the replay and the diff views share of their state: the search (`/`, `n`, `N`).
Each view's state class (`ReplayState`, `DiffState`) adds its own vars to these."""

from __future__ import annotations

from textual.dom import DOMNode
from textual.reactive import var


class BrowseState(DOMNode):
    search_text: var[str] = var("")
    """What `/` searches for ("" : no search)."""
    matches: var[list[int]] = var(list)
    """The places (steps, rows; 1-based) that match, in order; replaced, never changed in place."""
    searching: var[bool] = var(False)
    """A search worker is running: `matches` grows as it finds places."""
