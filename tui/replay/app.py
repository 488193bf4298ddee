"""The app of `swedeck replay` (SPEC §11.1): the replay screen, themes, help and palette.
Its result is a `ForkRequest` when the person pressed `f`, else None."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from swedeck.core.ui_settings import UIConfig

from ..first_frame import FirstFrame
from ..ui_config import apply_ui_config, tell_ui_notes
from .bindings import REPLAY_BINDINGS
from .replay_screen import REPLAY_SCREEN_CSS, ForkRequest, ReplayScreen


class ReplayApp(FirstFrame, App[ForkRequest | None]):
    TITLE = "swedeck replay"
    CSS_PATH = REPLAY_SCREEN_CSS

    def __init__(self, paths: list[Path], *, ui: UIConfig | None = None, theme: str | None = None,
                 **screen_options: Any) -> None:
        super().__init__()
        self.paths = paths
        self.screen_options = screen_options
        self.ui = ui or UIConfig()
        self._startup_notes = apply_ui_config(self, self.ui, theme=theme)

    def get_default_screen(self) -> ReplayScreen:
        """The replay screen is the app's first screen, not pushed over an empty one: the app's
        queue (and so its `Ready`, the first frame) waited for the pushed screen's whole mount.
        A default screen's own CSS file is not read (`CSS_PATH` above reads it)."""
        return ReplayScreen(self.paths, **self.screen_options)

    def on_mount(self) -> None:
        tell_ui_notes(self, self._startup_notes)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ReplayScreen):
            for binding in REPLAY_BINDINGS:
                yield SystemCommand(binding.description, binding.tooltip, getattr(screen, f"action_{binding.action}"))
