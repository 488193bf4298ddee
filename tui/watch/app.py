"""The app of `swedeck watch DIR`: a title and the watch screen; themes, keymap, help and
palette are the kit's (`tui/kit/`)."""

from __future__ import annotations

from typing import ClassVar

from swedeck.core.ui_settings import UIConfig
from swedeck.core.watch import DirectoryWatcher

from ..kit.app_base import ViewApp
from ..shared.fork import ForkRequest
from .watch_screen import SCAN_INTERVAL_S, WatchScreen


class WatchApp(ViewApp[ForkRequest | None]):
    TITLE = "swedeck watch"
    CSS_PATH: ClassVar = [WatchScreen.CSS_PATH]
    """A default screen's own CSS file is not read: the app reads it."""

    def __init__(self, watcher: DirectoryWatcher, *, ui: UIConfig | None = None, theme: str | None = None,
                 interval_s: float = SCAN_INTERVAL_S, rules: list[str] | None = None) -> None:
        super().__init__(ui=ui, theme=theme)
        self.watcher = watcher
        self.interval_s = interval_s
        self.rules = list(rules or [])

    def get_default_screen(self) -> WatchScreen:
        """The app's first screen (as in ReplayApp)."""
        return WatchScreen(self.watcher, self.interval_s, self.rules)
