"""The screen every swedeck view is built on (`ViewScreen`): its keys feed the F1 help and the
command palette (`tui/kit/app_base.py`), its CSS is the `.tcss` file beside its module, and
its thread workers end in one place.

Workers only compute and post messages; a worker that raises does not vanish: the person is
told what failed, and the view's `worker_failed` clears what the work had made busy (a search's
"(searching…)", a curve still drawing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from swedeck.core.text import visible


def css_beside(module_file: str) -> Path:
    """The `.tcss` file beside a screen's module (`replay_screen.py` -> `replay_screen.tcss`)."""
    return Path(module_file).with_suffix(".tcss")


class ViewScreen(Screen[None]):
    """A view of an app: a screen with its bindings as the one table of its keys."""

    BINDINGS: ClassVar[list[BindingType]] = []
    WORK: ClassVar[dict[str, str]] = {}
    """Worker group -> the words for it in an error ("the search", "the token curve")."""

    def key_table(self) -> list[Binding]:
        """Every key of this view, for the help and the palette (its `BINDINGS`)."""
        return [binding for binding in self.BINDINGS if isinstance(binding, Binding)]

    def request_quit(self) -> None:
        """Ctrl+Q (the app's key) on this view: end the app. The live view asks first while a command runs."""
        self.app.exit()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state == WorkerState.SUCCESS:
            self.worker_done(worker)
        elif event.state == WorkerState.ERROR:
            if self.worker_failed(worker):
                return
            what = self.WORK.get(worker.group, worker.group if worker.group != "default" else "a background task")
            error = worker.error
            self.notify(visible(f"{type(error).__name__}: {error}"), title=f"{what[:1].upper()}{what[1:]} failed",
                        severity="error", timeout=15, markup=False)

    def worker_done(self, worker: Worker[Any]) -> None:
        """A worker of this view returned (its results came as messages before it)."""

    def worker_failed(self, worker: Worker[Any]) -> bool:
        """A worker of this view raised: clear the busy state it held. True: the view told the
        person itself (else the kit does, with the error)."""
        return False
