"""The garbage collector in a process that streams while it draws (bench B1).

A full (generation 2) collection walks every tracked object with the GIL held, so every
thread, the UI's included, stops for its length. litellm's import leaves over 300,000
objects that live as long as the process; `freeze_permanent_objects()` moves everything
alive at that point out of the collector's reach, so later full collections walk only what
the session itself holds (bench B1; figures in docs/performance.md).
"""

from __future__ import annotations

import gc


def freeze_permanent_objects() -> None:
    """Everything alive now lives as long as the process: leave it out of later collections."""
    gc.freeze()
