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

A long live session is the same again: the transcript keeps up to 300 children, each a tree
of Textual widgets with their styles, caches and message tasks (about 300,000 objects), and
under a streamed answer and a command's flood a full collection ran about once a second and
walked them for 260-300 ms, a key's paint waiting behind it (bench B16). `LongLived` freezes
them once they have settled, and thaws after enough of them were let go, so that the next full
collection frees those (a cycle among frozen objects is never collected while it stays frozen).
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


class LongLived:
    """Objects a UI keeps for long (the live transcript's children). `settled()` freezes
    everything alive (`gc.freeze`), so later full collections walk only what is newer.
    `released(n)` counts what was let go since: a child let go is a tree of widgets in
    reference cycles (about 1,500 objects), which no collection frees while it is frozen.
    Once `THAW_AFTER` of them wait, the collection is `due`: `collect()` thaws, collects and
    freezes again, one walk of the whole heap (0.6-0.8 s in a live session with litellm
    loaded, bench B16). The UI runs it at a quiet moment (no key for a while), and at the
    latest once it is `overdue`, so that memory stays bounded.

    What else a freeze catches dies without a collection: Textual's rendered lines, which
    were nearly all of it, no longer refer to themselves (`tui/strip_cycles.py`), and a
    freeze does not stop reference counting."""

    THAW_AFTER = 100
    OVERDUE_AFTER = 300
    """Children let go before the collection runs whatever the person is doing: at most one
    transcript's worth (`MAX_CHILDREN`) waits."""

    def __init__(self) -> None:
        self.released_since = 0

    def settled(self) -> None:
        gc.freeze()

    def released(self, count: int) -> None:
        self.released_since += count

    @property
    def due(self) -> bool:
        return self.released_since >= self.THAW_AFTER

    @property
    def overdue(self) -> bool:
        return self.released_since >= self.OVERDUE_AFTER

    def collect(self) -> None:
        """Free what was let go frozen: thaw, collect, freeze again."""
        thaw()
        gc.collect()
        gc.freeze()
        self.released_since = 0
