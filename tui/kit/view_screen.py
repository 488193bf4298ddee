"""The screen every swedeck view is built on (`ViewScreen`): its keys feed the F1 help and the
command palette (`tui/kit/app_base.py`), its CSS is the `.tcss` file beside its module, and
its thread workers end in one place.

Workers only compute and post messages; a worker that raises does not vanish: the person is
told what failed, and the view's `worker_failed` clears what the work had made busy (a search's
"(searching…)", a curve still drawing).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, ParamSpec, TypeVar, cast

from textual import work
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from swedeck.core.text import visible


def css_beside(module_file: str) -> Path:
    """The `.tcss` file beside a screen's module (`replay_screen.py` -> `replay_screen.tcss`)."""
    return Path(module_file).with_suffix(".tcss")


class WorkerErrors:
    """What a screen does when one of its thread workers raises (the view's and the modal's
    base alike): the view clears what the work held busy (`worker_failed`), else the person is
    told what failed; the app goes on (the kit's workers never end it: `background`)."""

    WORK: ClassVar[dict[str, str]] = {}
    """Worker group -> the words for it in an error ("the search", "the token curve")."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state == WorkerState.SUCCESS:
            self.worker_done(worker)
        elif event.state == WorkerState.ERROR:
            if self.worker_failed(worker):
                return
            self.say_failed(worker.group, worker.error)

    def say_failed(self, work: str, error: BaseException | None) -> None:
        """Tell the person that `work` (a worker's group, an open run's work) failed, and why."""
        what = self.WORK.get(work, work if work != "default" else "a background task")
        self.notify(visible(f"{type(error).__name__}: {error}"),  # type: ignore[attr-defined]
                    title=f"{what[:1].upper()}{what[1:]} failed", severity="error", timeout=15, markup=False)

    def worker_done(self, worker: Worker[Any]) -> None:
        """A worker of this view returned (its results came as messages before it)."""

    def worker_failed(self, worker: Worker[Any]) -> bool:
        """A worker of this view raised: clear the busy state it held. True: the view told the
        person itself (else the kit does, with the error)."""
        return False


Params = ParamSpec("Params")
Returned = TypeVar("Returned")


def background(*, group: str = "default", exclusive: bool = False
               ) -> Callable[[Callable[Params, Returned]], Callable[Params, Worker[Returned]]]:
    """A method run in a thread worker the kit's way: its error never ends the app (the view's
    `worker_failed` or the kit's notice says it), where Textual's default would."""
    return cast(Callable[[Callable[Params, Returned]], Callable[Params, Worker[Returned]]],
                work(thread=True, exclusive=exclusive, exit_on_error=False, group=group))


class ViewScreen(WorkerErrors, Screen[None]):
    """A view of an app: a screen with its bindings as the one table of its keys."""

    BINDINGS: ClassVar[list[BindingType]] = []

    def key_table(self) -> list[Binding]:
        """Every key of this view, for the help and the palette (its `BINDINGS`)."""
        return [binding for binding in self.BINDINGS if isinstance(binding, Binding)]

    def request_quit(self) -> None:
        """Ctrl+Q (the app's key) on this view: end the app. The live view asks first while a command runs."""
        self.app.exit()


ResultType = TypeVar("ResultType")


class ViewModal(WorkerErrors, ModalScreen[ResultType]):
    """A dialog over a view (what-if, rules, subagents) with the view's worker handling."""
