"""The pacing room (issue 64.2): what keeps a key's frame quick while workers and the collector
run beside it, in one place, typed on the app (`ViewApp.pacing`).

- `quiet`: each key, click and scroll marked from its arrival to the frame after it is handled
  (`key_quiet.KeyQuiet`); a worker calls `quiet.wait()` between pieces of its work and sleeps,
  the GIL released, until that frame is drawn.
- `worker_pace(every_quiet, every_yield, yield_s)`: the same for a worker that walks many
  items (the token curve): it looks every `every_quiet` items whether a key is handled, and
  sleeps `yield_s` every `every_yield` items (a thread that never blocks keeps the GIL from the
  UI's thread for its whole switch interval, again and again).
- The collector (`core/startup/gc_tuning.py`, process-wide): `hold()` leaves collections off
  while a large file is read (its objects outlive them all), `release()` freezes what it made
  and lets them run again, `collect_young()` runs the young generations while a hold lasts (a
  dialog's widgets are still garbage), `freeze()` and `thaw()` for what a replay opens and lets
  go, and `long_lived`: the live transcript's children, frozen once settled and collected at a
  quiet moment (`gc_tuning.LongLived`), one per app, not per process.

`pacing_of(app)`: a `ViewApp`'s pacing; an app that is not one (a widget under test in a plain
`App`) gets one of its own, never shared.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from textual.app import App

from swedeck.core.startup import gc_tuning

from .key_quiet import KeyQuiet


class Pacing:
    def __init__(self) -> None:
        self.quiet = KeyQuiet()
        self.long_lived = gc_tuning.LongLived()

    # --- workers ---------------------------------------------------------------------------

    def worker_pace(self, every_quiet: int, every_yield: int, yield_s: float) -> Callable[[int], None]:
        """For a worker walking items: called with each item's number, it steps aside for a key
        every `every_quiet` items and lets the UI's thread have the GIL every `every_yield`."""
        def pace(number: int) -> None:
            if number % every_quiet == 0:
                self.quiet.wait()
            if number % every_yield == 0:
                time.sleep(yield_s)
        return pace

    # --- the collector ---------------------------------------------------------------------

    @staticmethod
    def hold() -> None:
        gc_tuning.hold_collections()

    @staticmethod
    def release() -> None:
        gc_tuning.release_collections()

    @staticmethod
    def collect_young() -> None:
        """While collections are held: the young generations' garbage (a dialog's widgets) is
        still collected; without a hold the collector runs them itself."""
        if gc_tuning.collections_held():
            gc.collect(1)

    @staticmethod
    def freeze() -> None:
        """What is alive now lives as long as what is open: out of later collections' walks."""
        gc_tuning.freeze_permanent_objects()

    @staticmethod
    def thaw() -> None:
        """What was frozen may be garbage now (a file no longer open)."""
        gc_tuning.thaw()


_OWN: WeakKeyDictionary[App[Any], Pacing] = WeakKeyDictionary()


def pacing_of(app: App[Any]) -> Pacing:
    """`app`'s pacing: a `ViewApp`'s own, else one made for that app alone."""
    pacing = getattr(app, "pacing", None)  # a ViewApp's (kit.app_base imports this module)
    if isinstance(pacing, Pacing):
        return pacing
    own = _OWN.get(app)
    if own is None:
        own = _OWN[app] = Pacing()
    return own
