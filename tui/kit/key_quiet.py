"""Background work steps aside while a key is handled (issue 49: each key p99 <= 50 ms).

A worker thread that never blocks holds the GIL for its whole switch interval, again and
again, while the UI's thread handles a key: a jump in a 45,000-step file took 57-109 ms at
p90 while the token curve's worker ran, 15-20 ms after it. The app marks a key's arrival
(`arrived`) and, once the key's bindings have run, asks for the frame after them (`handled`);
a worker that can wait calls `wait` between pieces of its work and sleeps, the GIL released,
until that frame is drawn (at most `MAX_WAIT_S`: a worker is slowed, never stopped).

The frame is asked for only once the key is handled, not at its arrival: Textual hands a key
to the focused widget's own queue, so a screen with nothing yet to redraw ran the callbacks
"after its refresh" at once, and the worker went on through the key's frame (a search's next
match took 127 ms at p99, its frame stretched from 10 to 35 ms by the worker's turns).
A key that reaches no binding (typed into a line, stopped by a widget) is never handled here:
it quiets workers for `UNHANDLED_S`. A click and the wheel are marked the same way (`ViewApp`).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from textual.app import App

MAX_WAIT_S = 0.25
"""The longest one `wait` sleeps."""

UNHANDLED_S = 0.25
"""How long after its arrival a key no binding handled still quiets workers."""


class KeyQuiet:
    def __init__(self) -> None:
        self._drawn = threading.Event()
        self._drawn.set()
        self._key = 0
        self.last_key_at = 0.0
        """`time.monotonic()` of the latest key's arrival."""

    def arrived(self) -> None:
        """A key came: quiet until the frame after its bindings (`handled`), or `UNHANDLED_S`."""
        self.last_key_at = time.monotonic()
        self._key += 1
        self._drawn.clear()

    def handled(self, app: App[Any]) -> None:
        """The latest key's bindings have run: quiet until the frame after them is drawn.
        A frame asked for by an earlier key ends no later key's quiet."""
        key = self._key

        def drawn() -> None:
            if key == self._key:
                self._drawn.set()
        app.call_after_refresh(lambda: app.screen.call_after_refresh(drawn))

    def wait(self) -> None:
        """In a worker thread: return once no key is being handled (at once when none is; at
        the latest after `MAX_WAIT_S`).
        A worker woken by one key's frame looks again before it goes on: the next key may have
        come while it waited for the GIL, and its work would stretch that key's frame."""
        until = time.monotonic() + MAX_WAIT_S
        while not self._drawn.is_set():
            left = min(self.last_key_at + UNHANDLED_S, until) - time.monotonic()
            if left <= 0:
                return
            self._drawn.wait(left)

    def idle_for(self, seconds: float) -> bool:
        """No key arrived in the last `seconds`."""
        return self.idle_left(seconds) <= 0

    def idle_left(self, seconds: float) -> float:
        """How long until no key will have arrived for `seconds` (0 when none has already)."""
        return max(0.0, self.last_key_at + seconds - time.monotonic())

    @property
    def quiet(self) -> bool:
        """No key is being handled: the latest one's frame is drawn, or it reached no binding."""
        return self._drawn.is_set() or self.idle_for(UNHANDLED_S)
