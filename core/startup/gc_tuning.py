"""The garbage collector in a process that streams while it draws (bench B1), and while it
starts (bench B2, B3).

A full (generation 2) collection walks every tracked object with the GIL held, so every
thread, the UI's included, stops for its length. litellm's import leaves over 300,000
objects that live as long as the process; `freeze_permanent_objects()` moves everything
alive at that point out of the collector's reach, so later full collections walk only what
the session itself holds (bench B1; figures in docs/performance.md).

A UI's start is the same in small: the imports, the stylesheet and the first screen make
about 75,000 objects that live as long as the process and almost no garbage, and the
collector, run every 700 allocations, walks them about 180 times on the way to the first
frame (40 ms of 400 on this machine). `hold_collections()` (the command line, for a
command that opens a UI) leaves them uncollected until `release_collections()` (the app's
first frame), which freezes what the start made and lets collections run again.
"""

from __future__ import annotations

import gc

_held = False


def freeze_permanent_objects() -> None:
    """Everything alive now lives as long as the process: leave it out of later collections."""
    gc.freeze()


def thaw() -> None:
    """What was frozen may be garbage now (a replay's previous file): back in the collector's reach."""
    gc.unfreeze()


def hold_collections() -> None:
    """No cyclic collections until `release_collections()`."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def collections_held() -> bool:
    """Collections are held (`hold_collections`): a caller may run the young ones itself."""
    return _held


def release_collections() -> None:
    """End a hold (a no-op without one, as in a test's app): what the start made lives as
    long as the process, so it is frozen, and collections run again."""
    global _held
    if _held:
        _held = False
        freeze_permanent_objects()
        gc.enable()
