"""What every swedeck app does at its first frame."""

from __future__ import annotations

from swedeck.core.startup import holds


class FirstFrame:
    """Mixed into each app, before `App`: the first frame ends what the command line held off
    until it (`core/startup/holds.py`): what the start made is frozen and collections run again,
    and pydantic's plugins are looked for again. Textual calls `on_ready` of every class along
    the app's MRO."""

    def on_ready(self) -> None:
        holds.release()
