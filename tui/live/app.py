"""The app of a live session (`swedeck run`, `swedeck demo`, a fork): a title and the
session screen. Themes, keymap, help, palette and quitting are the kit's (`tui/kit/`).

The session screen holds the session's state. The app's result (`app.run()`'s return
value) is the exit code of the session (SPEC §2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from swedeck.core.exit_status import exit_line

from ..kit.app_base import ViewApp
from .messages import SessionFinished
from .session_screen import SessionScreen

if TYPE_CHECKING:
    from swedeck.core.session import SessionControl


class SwedeckApp(ViewApp[int]):
    TITLE = "swedeck"
    CSS_PATH: ClassVar = [SessionScreen.CSS_PATH]

    def __init__(self, session: SessionControl, *, theme: str | None = None, themes_dir: Path | None = None,
                 registry: dict[str, type] | None = None) -> None:
        super().__init__(ui=session.config.ui, theme=theme, themes_dir=themes_dir)
        self.session = session
        self.registry = registry
        self.exit_code = 0
        self.summary = ""
        """What the terminal shows after the UI closes: how the session ended, where it is saved."""

    def get_default_screen(self) -> SessionScreen:
        return SessionScreen(self.session, self.registry)

    @property
    def session_screen(self) -> SessionScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, SessionScreen)
        return screen

    def on_session_finished(self, message: SessionFinished) -> None:
        self.exit_code = message.exit_code
        words = exit_line(message.exit_status, message.message)
        self.summary = words + (f"\ntrajectory: {message.trajectory_path}" if message.trajectory_path else "")
