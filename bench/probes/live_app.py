"""Hooks for the probes that run the real `swedeck` command line headless (B1, B6).

Installed from the probe, so the app's code stays as it is: every Textual app runs
headless at a given size (it composes and renders each frame, but writes nothing to a
terminal); on Textual's `Ready` event a 5 ms heartbeat timer starts, whose gaps are the
event loop's stalls; the session controller's `emit` (the core-to-UI seam, agent thread)
and `drain` (UI thread) call the probe's watchers; a watchdog ends a probe that hangs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import swedeck.tui  # noqa: F401  (before Textual: it sets the frame rate of swedeck's apps)

# isort: split

from textual import events
from textual.app import App

if TYPE_CHECKING:  # the probe must not import what the command it measures does not
    from swedeck.core import events as ev

HEARTBEAT_S = 0.005


def run_headless(size: tuple[int, int]) -> None:
    """Make every Textual app run headless at `size`: frames are composed and rendered, and
    nothing is written to a terminal."""
    run = App.run

    def headless(app: App, *args: Any, **kwargs: Any) -> Any:
        kwargs.update(headless=True, size=size)
        return run(app, *args, **kwargs)

    App.run = headless


class LiveApp:
    def __init__(self, size: tuple[int, int], watchdog_s: float = 90):
        self.size = size
        self.watchdog_s = watchdog_s
        self.app: App | None = None
        self.gaps: list[tuple[float, float]] = []  # (when, gap) of the heartbeat
        self._beat: float | None = None
        self.on_emit: Callable[[ev.Event], None] = lambda event: None
        self.on_drain: Callable[[list[Any]], None] = lambda batch: None

    def longest_gap(self, start: float, end: float = float("inf")) -> float:
        return max((gap for at, gap in self.gaps if start <= at <= end), default=0.0)

    def finish(self, line: str) -> None:
        """Print the probe's JSON line and leave (the session's threads need no goodbye)."""
        os.write(1, (line + "\n").encode())  # Textual may have replaced sys.stdout
        os._exit(0)

    def run(self, argv: list[str]) -> None:
        from swedeck.cli import main
        from swedeck.tui.live.controller import SessionController

        probe = self
        emit, drain = SessionController.emit, SessionController.drain

        def ready(app: App, _event: events.Ready) -> None:
            probe.app = app
            app.set_interval(HEARTBEAT_S, probe._heartbeat)

        def watched_emit(controller: SessionController, event: ev.Event) -> None:
            probe.on_emit(event)
            emit(controller, event)

        def watched_drain(controller: SessionController) -> list[Any]:
            batch = drain(controller)
            probe.on_drain(batch)
            return batch

        run_headless(self.size)
        App._on_ready = ready  # dispatched along the MRO, so every app subclass gets it too
        SessionController.emit, SessionController.drain = watched_emit, watched_drain
        timer = threading.Timer(self.watchdog_s, lambda: (os.write(2, b"the probe timed out\n"), os._exit(3)))
        timer.daemon = True
        timer.start()
        code = main(argv)
        os.write(2, f"the command ended (exit {code}) before the probe had its figures\n".encode())
        os._exit(code or 4)

    def _heartbeat(self) -> None:
        now = time.perf_counter()
        if self._beat is not None:
            self.gaps.append((now, now - self._beat))
        self._beat = now
