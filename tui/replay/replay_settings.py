"""What the replay takes from the person's config besides `ui` (`ReplaySettings`), read when it
is first needed, once (`SettingsOnce`): the config's import is 125 ms, and the first frame
does not wait for it (bench B2). The token curve's thread asks for it first (its prices), off
the UI's thread; `t`, `p`, `b`, `f` and `R` ask on the UI's."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import msgspec

from swedeck.core.errors import UsageError


class ReplaySettings(msgspec.Struct, frozen=True):
    """What the replay takes from the person's config besides `ui`."""

    processors: list[dict[str, Any]]
    fork_model: str | None
    rules: list[str] = msgspec.field(default_factory=list)
    """`agent.rules`: the approval rules `R` tries over the open file."""
    prices: dict[str, dict[str, float]] = msgspec.field(default_factory=dict)
    """`model.prices`: each step's dollars are priced with them over litellm's map."""


class SettingsOnce:
    """`read` called the first time the settings are asked for, from any thread; until then, and
    where it raises `UsageError` (said with `unreadable`, the replay going on without them), the
    settings are `given` (the command line's processors and model)."""

    def __init__(self, read: Callable[[], ReplaySettings] | None, given: ReplaySettings,
                 unreadable: Callable[[UsageError], None]) -> None:
        self._read = read
        self._settings = given
        self._unreadable = unreadable
        self._lock = threading.Lock()

    def get(self) -> ReplaySettings:
        with self._lock:
            read, self._read = self._read, None
            if read is not None:
                try:
                    self._settings = read()
                except UsageError as error:
                    self._unreadable(error)
            return self._settings
