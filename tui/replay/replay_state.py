"""What the replay view shows, as Textual vars: the state, without a widget (the live
screen's pattern, `live/session_state.py`), tested without an app (tests/test_view_states.py).

Widgets never read it; they `data_bind` to it: the header to `header` (computed from the
vars below, never built by hand), the meter to `meter_status` and `meter_notes`, the token
curve to `curve_points` and `step`. The screen itself watches `step` (show that step) and
`error` (the error view instead of the panes). Textual binds a widget only to the node
that composes it, so the replay screen is a `ReplayState` (its base class).
"""

from __future__ import annotations

import msgspec
from textual.reactive import var

from swedeck.core.context_status import ContextStatus

from ..shared.browse_state import BrowseState
from .header import ReadProgress, ReplayHeader


class OpenedFile(msgspec.Struct, frozen=True):
    """The file the replay shows: its name, and, once it reads, its format, model and step count."""

    name: str
    format: str | None = None
    """None while no document is open (an unreadable file)."""
    model: str | None = None
    steps: int = 0


class ReplayState(BrowseState):
    step: var[int] = var(0, init=False)
    """The step shown (1-based; 0 while none is)."""
    error: var[str | None] = var(None, init=False)
    """Why the file or the step cannot be shown; the panes give way to it while set."""
    file_index: var[int] = var(0)
    """Which of the replay's files is shown (L / H move)."""
    files: var[int] = var(1)
    opened: var[OpenedFile] = var(lambda: OpenedFile(""))
    following: var[bool] = var(False)
    """`--follow`: new steps of a live file are shown as they are written."""
    playing: var[bool] = var(False)
    """`--play`: the model's words are typed out, step after step, until a key is pressed."""
    answering: var[str | None] = var(None)
    """Following a record (`swedeck record --attach`): the words of the answer its agent is being
    streamed now, before its step is in the file; None when none is."""
    branch: var[str | None] = var(None)
    """The branch shown (a subagent's run, a sidechain), opened with `b` from its main line."""
    curve: var[dict[int, int]] = var(dict)
    """The token curve: step -> prompt tokens, as the worker computes it."""
    curve_points: var[list[int]] = var(list)
    """The token curve over the steps computed so far, in step order (what the chart draws)."""
    meter_status: var[ContextStatus | None] = var(None)
    """The shown step's context figures: recorded, or estimated from the token curve."""
    meter_notes: var[list[str]] = var(list)
    """Said after them: recorded or not, how the prompt is known, a compaction, the cost."""
    reading: var[ReadProgress | None] = var(None)
    """A large file read in a worker while its first or last steps are shown (`ReadingDocument`:
    the last ones are numbered from the end until it is done); None otherwise."""
    header: var[ReplayHeader] = var(ReplayHeader)
    """The header's figures: file, format, step, model, search, follow and play (computed)."""

    def compute_header(self) -> ReplayHeader:
        opened = self.opened
        return ReplayHeader(name=opened.name, file_number=self.file_index + 1, files=self.files,
                            format=opened.format, step=self.step, steps=opened.steps, model=opened.model,
                            query=self.search_text, matches=len(self.matches), searching=self.searching,
                            following=self.following, playing=self.playing, branch=self.branch,
                            answering=self.answering is not None, reading=self.reading)

    def add_curve(self, points: dict[int, int]) -> None:
        """Steps of the token curve, from its worker: the curve and what the chart draws, in one
        place. The worker sends steps in order: each batch extends both (no copy of the whole
        curve per batch: over 45,000 steps that was a pause of a quarter second each time)."""
        curve = self.curve
        last = max(curve) if curve else 0
        in_order = all(step > last for step in points) and list(points) == sorted(points)
        curve.update(points)
        if in_order and len(self.curve_points) == len(curve) - len(points):
            self.curve_points = self.curve_points + list(points.values())
        else:
            self.curve_points = [curve[step] for step in sorted(curve)]
