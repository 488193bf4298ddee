"""The app of `swedeck watch DIR`."""

from __future__ import annotations

from textual.app import App

from swedeck.core.watch import DirectoryWatcher

from ..replay.app_themes import register_themes
from .watch_screen import SCAN_INTERVAL_S, WatchScreen


class WatchApp(App[object]):
    TITLE = "swedeck watch"

    def __init__(self, watcher: DirectoryWatcher, *, theme: str | None = None,
                 interval_s: float = SCAN_INTERVAL_S) -> None:
        super().__init__()
        self.watcher = watcher
        self.interval_s = interval_s
        register_themes(self, theme)

    def on_mount(self) -> None:
        self.push_screen(WatchScreen(self.watcher, self.interval_s))
