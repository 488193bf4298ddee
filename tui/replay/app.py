"""The app of `swedeck replay` (SPEC §11.1): a title and the replay screen; themes, keymap,
help and palette are the kit's (`tui/kit/`). Its result is a `ForkRequest` when the person
pressed `f`, else None."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from swedeck.core.ui_settings import UIConfig

from ..kit.app_base import ViewApp
from ..shared.fork import ForkRequest
from .replay_screen import ReplayScreen


class ReplayApp(ViewApp[ForkRequest | None]):
    TITLE = "swedeck replay"
    CSS_PATH: ClassVar = [ReplayScreen.CSS_PATH]
    """A default screen's own CSS file is not read: the app reads it."""

    def __init__(self, paths: list[Path], *, ui: UIConfig | None = None, theme: str | None = None,
                 **screen_options: Any) -> None:
        super().__init__(ui=ui, theme=theme)
        self.paths = paths
        self.screen_options = screen_options

    def get_default_screen(self) -> ReplayScreen:
        """The replay screen is the app's first screen, not pushed over an empty one: the app's
        queue (and so its `Ready`, the first frame) waited for the pushed screen's whole mount."""
        return ReplayScreen(self.paths, **self.screen_options)
