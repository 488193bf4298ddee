"""The app of `swedeck watch DIR`."""

from __future__ import annotations

from textual.app import App

from swedeck.core.ui_settings import UIConfig
from swedeck.core.watch import DirectoryWatcher

from ..first_frame import FirstFrame
from ..replay.replay_screen import ForkRequest
from ..ui_config import apply_ui_config, tell_ui_notes
from .watch_screen import SCAN_INTERVAL_S, WatchScreen


class WatchApp(FirstFrame, App[ForkRequest | None]):
    TITLE = "swedeck watch"

    def __init__(self, watcher: DirectoryWatcher, *, ui: UIConfig | None = None, theme: str | None = None,
                 interval_s: float = SCAN_INTERVAL_S) -> None:
        super().__init__()
        self.watcher = watcher
        self.interval_s = interval_s
        self.ui = ui or UIConfig()
        self._startup_notes = apply_ui_config(self, self.ui, theme=theme)

    def get_default_screen(self) -> WatchScreen:
        """The app's first screen (as in ReplayApp)."""
        return WatchScreen(self.watcher, self.interval_s)

    def on_mount(self) -> None:
        tell_ui_notes(self, self._startup_notes)
