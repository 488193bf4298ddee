"""The agent's control flags (SPEC §6.1): the mode, the state, and the interrupt and quit
requests that other threads make while the loop runs.

Other threads only set a flag here (under the lock) and then cancel what blocks the loop
(the model stream, the running command, a pending request); the loop's thread reads the
flags at its checkpoints and raises the exception that ends its step.
"""

from __future__ import annotations

import threading

from .. import events as ev
from ..exit_status import ExitStatus
from .exits import Interrupted, QuitRequested

_INTERRUPTIBLE = (ev.AgentState.THINKING, ev.AgentState.RUNNING, ev.AgentState.AWAITING_CONFIRMATION)


class Control:
    def __init__(self, mode: ev.Mode, emit: ev.EventSink):
        self._emit = emit
        self._lock = threading.RLock()
        self.mode: ev.Mode = mode
        self.state = ev.AgentState.STARTING
        self.quit_requested = False
        self.quit_status = ExitStatus.USER_QUIT
        self._interrupt_requested = False

    def set_state(self, state: ev.AgentState, detail: str = "") -> None:
        self.state = state
        self._emit(ev.StateChanged(state=state, detail=detail))

    def change_mode(self, mode: ev.Mode) -> ev.Mode | None:
        """Switch to `mode`; returns the mode it replaced, or None when it was already on."""
        with self._lock:
            if mode == self.mode:
                return None
            previous, self.mode = self.mode, mode
            return previous

    def request_interrupt(self) -> ev.AgentState | None:
        """Flag an interrupt; returns the state it interrupts, or None when nothing can be."""
        with self._lock:
            if self.state not in _INTERRUPTIBLE:
                return None
            self._interrupt_requested = True
            return self.state

    def request_quit(self, status: ExitStatus) -> None:
        """The first quit names the end: a signal's `Interrupted` is not overwritten by the
        `UserQuit` of the UI closing after it."""
        with self._lock:
            if not self.quit_requested:
                self.quit_requested = True
                self.quit_status = status

    def clear_interrupt(self) -> None:
        with self._lock:
            self._interrupt_requested = False

    def check_quit(self) -> None:
        if self.quit_requested:
            raise QuitRequested()

    def check_interrupt(self) -> None:
        """Before the model or the shell is asked: an interrupt that came in between steps."""
        with self._lock:
            if self._interrupt_requested:
                raise Interrupted()
