"""What a command that opens a UI holds off until the app's first frame (bench B2, B3).

`hold()` is called by the command line for such a command; `release()` by the app's first
frame (`tui/kit/first_frame.py`), and by the command line when the command ends or fails
before one. A release without a hold (an app under Pilot) changes nothing.

- The garbage collector (`gc_tuning`): the start makes ~75,000 objects that live as long
  as the process and almost no garbage.
- pydantic's plugin discovery: the first pydantic model a process builds makes pydantic read
  the entry points of every installed distribution (`pydantic.plugin._loader`), looking for
  plugins that instrument validation (20 ms of a 500 ms start in a venv of 170 packages).
  swedeck's own models need none. `PYDANTIC_DISABLE_PLUGINS` (pydantic's documented switch)
  is set for the start, only when the person has not set it, and only for a command that
  starts no child process before its first frame (`replay`, `diff`, `watch`: a live session
  starts its environment's shell while the app starts, and the shell would inherit the
  variable); the release removes it, so the models built after the first frame get the
  person's plugins as usual, and a session forked later starts without it.
"""

from __future__ import annotations

import os

from . import gc_tuning

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"

_holding_plugins = False


def hold(*, plugins: bool) -> None:
    """Hold the collector, and pydantic's plugin scan where `plugins` (see above)."""
    global _holding_plugins
    gc_tuning.hold_collections()
    if plugins and PLUGINS_VARIABLE not in os.environ:
        os.environ[PLUGINS_VARIABLE] = "__all__"
        _holding_plugins = True


def release() -> None:
    global _holding_plugins
    if _holding_plugins:
        _holding_plugins = False
        os.environ.pop(PLUGINS_VARIABLE, None)
    gc_tuning.release_collections()
