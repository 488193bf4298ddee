"""Background work steps aside while a key is handled (issue 49: each key p99 <= 50 ms).

A worker thread that never blocks holds the GIL for its whole switch interval, again and
again, while the UI's thread handles a key: a jump in a 45,000-step file took 57-109 ms at
p90 while the token curve's worker ran, 15-20 ms after it. The app marks a key's arrival
(`arrived`) and its frame (after the app's and then the screen's refresh); a worker that can
wait calls `wait` between pieces of its work and sleeps, the GIL released, until the frame
is drawn (at most `MAX_WAIT_S`: a worker is slowed, never stopped).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from textual.app import App

MAX_WAIT_S = 0.25


class KeyQuiet:
    def __init__(self) -> None:
        self._quiet = threading.Event()
        self._quiet.set()
        self.last_key_at = 0.0
        """`time.monotonic()` of the latest key's arrival."""

    def arrived(self, app: App[Any]) -> None:
        """A key is being handled: quiet until the frame after it."""
        self.last_key_at = time.monotonic()
        self._quiet.clear()
        app.call_after_refresh(lambda: app.screen.call_after_refresh(self._quiet.set))

    def wait(self) -> None:
        """In a worker thread: return once no key is being handled (or after `MAX_WAIT_S`)."""
        self._quiet.wait(MAX_WAIT_S)

    def idle_for(self, seconds: float) -> bool:
        """No key arrived in the last `seconds`."""
        return time.monotonic() - self.last_key_at >= seconds

    @property
    def quiet(self) -> bool:
        return self._quiet.is_set()
