"""What the replay view shows, as Textual vars: the state, without a widget (the live
screen's pattern, `screens/session_state.py`).

Widgets never read it; they `data_bind` to it: the header to `header`, the meter to
`meter_status` and `meter_notes`, the token curve to `curve_points`. The screen itself
watches `step` (show that step) and `error` (the error view instead of the panes).
Textual binds a widget only to the node that composes it, so the replay screen is a
`ReplayState` (its base class); this class has no widgets and no layout.
"""

from __future__ import annotations

from textual.dom import DOMNode
from textual.reactive import var

from swedeck.core.context_status import ContextStatus

from .header import ReplayHeader


class ReplayState(DOMNode):
    step: var[int] = var(0, init=False)
    """The step shown (1-based; 0 while none is)."""
    error: var[str | None] = var(None, init=False)
    """Why the file or the step cannot be shown; the panes give way to it while set."""
    header: var[ReplayHeader] = var(ReplayHeader)
    """The header's figures: file, format, step, model, search, follow and play."""
    meter_status: var[ContextStatus | None] = var(None)
    """The shown step's context figures: recorded, or estimated from the token curve."""
    meter_notes: var[list[str]] = var(list)
    """Said after them: recorded or not, how the prompt is known, a compaction, the cost."""
    curve_points: var[list[int]] = var(list)
    """The token curve over the steps computed so far."""
