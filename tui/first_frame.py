"""What every swedeck app does at its first frame."""

from __future__ import annotations

from swedeck.core.gc_tuning import release_collections


class FirstFrame:
    """Mixed into each app, before `App`: the first frame ends the command line's hold on the
    garbage collector (`core/gc_tuning.py`), so what the start made is frozen and collections
    run again. Textual calls `on_ready` of every class along the app's MRO."""

    def on_ready(self) -> None:
        release_collections()
