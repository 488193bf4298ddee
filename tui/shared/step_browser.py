"""What the replay and the diff views do the same way, once: moving between places (a step
of a run, a row of two aligned runs; numbered from 1), go-to, the search in a worker over
the core's `step_matches`, forking and quitting.

A view subclasses `StepBrowser` with its state class (a `BrowseState`) and gives:
`here` and `count` (where it is, how many places), `go(number)`, `goto(number)` (what a
typed number means there), and `search_places(source, query)` (a generator run in the worker: it
must read its own copy of what it searches, never the UI's).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from textual.message import Message
from textual.worker import Worker, get_current_worker

from swedeck.core.acp.fork import acp_resume, is_acp_record
from swedeck.core.errors import SwedeckError
from swedeck.core.replay.search import next_match
from swedeck.core.text import visible
from swedeck.core.trajectory.model import Trajectory, TrajectoryInfo

from ..kit.view_screen import ViewScreen, background
from .browse_state import BrowseState
from .fork import ForkRequest

SEARCH_BATCH_S = 0.2
"""How often a running search hands its matches to the screen."""


class StepBrowser(BrowseState, ViewScreen):
    DEFAULT_CSS = """
    StepBrowser { layers: _default ask; }
    """
    GOTO_PROMPT: ClassVar[str] = "go to step"
    SEARCH_PROMPT: ClassVar[str] = "search thoughts, commands and output"
    WORK: ClassVar[dict[str, str]] = {"search": "the search"}

    _searched_to_first = False

    # --- what a view gives ----------------------------------------------------------------

    @property
    def here(self) -> int:
        """The place shown (1-based; 0 while none is)."""
        raise NotImplementedError

    @property
    def count(self) -> int:
        raise NotImplementedError

    def go(self, number: int) -> None:
        """Show place `number` (kept within 1..count)."""
        raise NotImplementedError

    def goto(self, number: int) -> None:
        """A number typed at go-to (`g`): by default the place itself."""
        self.go(number)

    def search_source(self) -> object:
        """What the search's results belong to (a file): results for another are dropped."""
        return None

    def search_places(self, source: object, query: str) -> Iterator[int]:
        """The places of `source` that match, in order (run in the worker)."""
        raise NotImplementedError

    def searched(self) -> None:
        """The search's query changed: redraw what marks its matches (the header follows
        `matches` and `searching` itself)."""

    # --- moves -----------------------------------------------------------------------------

    def action_next_place(self) -> None:
        self.go(self.here + 1)

    def action_previous_place(self) -> None:
        self.go(self.here - 1)

    def action_first_place(self) -> None:
        self.go(1)

    def action_last_place(self) -> None:
        self.go(self.count)

    async def action_goto(self) -> None:
        def answer(value: str | None) -> None:
            if value and value.strip().lstrip("-").isdigit():
                self.goto(int(value))
        await self.ask(self.GOTO_PROMPT, "", answer)

    async def ask(self, prompt: str, value: str, answer: Callable[[str | None], None]) -> None:
        """A one-line question over the view's bottom (`AskLine`: no screen pushed), made on first use."""
        from ..widgets.ask_line import AskLine  # on its key, not before the first frame

        found = self.query(AskLine)
        line = found.first() if found else AskLine()
        if not found:
            await self.mount(line)
        line.ask(prompt, value, answer)

    # --- search ------------------------------------------------------------------------------

    async def action_search(self) -> None:
        def answer(value: str | None) -> None:
            if value is not None:
                self.search(value)
        await self.ask(self.SEARCH_PROMPT, self.search_text, answer)

    def search(self, text: str) -> None:
        """Search in a worker (a big file, a common word): the UI stays live, matches arrive as
        they are found, and a new search (or an empty one) cancels the one running."""
        self.workers.cancel_group(self, "search")
        self.search_text, self.matches = text, []
        self.searching = bool(text) and self.count > 0
        self._searched_to_first = False
        self.searched()
        if self.searching:
            self.run_search(self.search_source(), text)

    class SearchFound(Message):
        """Places that match the search, from the worker; `done` with the last batch."""

        def __init__(self, source: object, query: str, places: list[int], done: bool) -> None:
            super().__init__()
            self.source, self.query, self.places, self.done = source, query, places, done

    @background(exclusive=True, group="search")
    def run_search(self, source: object, query: str) -> None:
        worker = get_current_worker()
        batch: list[int] = []
        last = time.monotonic()
        for number in self.search_places(source, query):
            if worker.is_cancelled:
                return
            batch.append(number)
            if time.monotonic() - last >= SEARCH_BATCH_S:
                self.post_message(self.SearchFound(source, query, batch, done=False))
                batch, last = [], time.monotonic()
        if not worker.is_cancelled:
            self.post_message(self.SearchFound(source, query, batch, done=True))

    def on_step_browser_search_found(self, message: SearchFound) -> None:
        if message.source != self.search_source() or message.query != self.search_text:
            return  # an older search's
        self.matches = [*self.matches, *message.places]
        if self.matches and not self._searched_to_first and self.here not in self.matches:
            self._searched_to_first = True
            self.go(next_match(self.matches, self.here) or self.here)
        if message.done:
            self.searching = False
            if not self.matches:
                self.notify(visible(f"no step matches {message.query!r}"), severity="warning", markup=False)
        # nothing shown is drawn again: the marks follow the query, the header the matches
        # (each batch redrew the whole step, a frame in the way of a key: issue 49)

    def worker_failed(self, worker: Worker[Any]) -> bool:
        if worker.group != "search":
            return False
        self.searching = False
        error = worker.error
        self.notify(visible(f"{type(error).__name__}: {error}"), title="The search stopped", severity="error",
                    timeout=15, markup=False)
        return True

    def action_next_match(self) -> None:
        target = next_match(self.matches, self.here)
        if target is not None:
            self.go(target)

    def action_previous_match(self) -> None:
        target = next_match(self.matches, self.here, forward=False)
        if target is not None:
            self.go(target)

    # --- fork and quit ---------------------------------------------------------------------

    def fork(self, path: Path, step: int, model: str | None, how: str, info: TrajectoryInfo | None = None,
             trajectory: Callable[[], Trajectory] | None = None) -> None:
        """End the app with a fork of `step` of the run in `path`; without a model, say how to name one.
        A record of an ACP session (`info`) forks into its agent, where it can (`core/acp/fork.py`)."""
        if info is not None and trajectory is not None and is_acp_record(info):
            try:
                acp_resume(trajectory(), step)
            except SwedeckError as error:
                self.notify(str(error), title="This ACP session cannot fork here", severity="error", markup=False)
                return
            self.app.exit(ForkRequest(path, step))
            return
        if not model:
            self.notify(f"A fork continues with a model: {how}.", title="No model to fork with", severity="error",
                        markup=False)
            return
        self.app.exit(ForkRequest(path, step))

    leaves_app = False
    """Quitting this view ends the app even when it lies over another (one of N runs' pairs, `]`)."""

    def action_quit_view(self) -> None:
        if self.app.screen_stack[0] is not self and not self.leaves_app:  # opened from another view: back
            self.app.pop_screen()
        else:
            self.app.exit()
