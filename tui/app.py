"""The Textual app of a live session: themes, keymap, help, palette, quitting.

The app is thin: the session screen holds the session's state. The app's result
(`app.run()`'s return value) is the exit code of the session (SPEC §2).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen

from swedeck.core.agent.exits import exit_line

from .bindings import APP_BINDINGS, all_bindings
from .first_frame import FirstFrame
from .messages import SessionFinished
from .screens.help_screen import HelpScreen
from .screens.session_screen import SessionScreen
from .ui_config import apply_ui_config, tell_ui_notes

if TYPE_CHECKING:
    from swedeck.core.session import SessionControl


class SwedeckApp(FirstFrame, App[int]):
    TITLE = "swedeck"
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]

    def __init__(self, session: SessionControl, *, theme: str | None = None, themes_dir: Path | None = None,
                 registry: dict[str, type] | None = None) -> None:
        super().__init__()
        self.session = session
        self.registry = registry
        self.exit_code = 0
        self.summary = ""
        """What the terminal shows after the UI closes: how the session ended, where it is saved."""
        self.ui = session.config.ui
        self._startup_notes = apply_ui_config(self, self.ui, theme=theme, themes_dir=themes_dir)

    @property
    def session_screen(self) -> SessionScreen:
        return self.get_screen("session")  # type: ignore[return-value]

    def on_mount(self) -> None:
        self.install_screen(SessionScreen(self.session, self.registry), name="session")
        self.push_screen("session")
        tell_ui_notes(self, self._startup_notes)

    def on_session_finished(self, message: SessionFinished) -> None:
        self.exit_code = message.exit_code
        words = exit_line(message.exit_status, message.message)
        self.summary = words + (f"\ntrajectory: {message.trajectory_path}" if message.trajectory_path else "")

    def action_request_quit(self) -> None:
        self.session_screen.request_quit()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(all_bindings(), self.ui.keymap))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        seen: set[str] = set()
        for binding in all_bindings():
            if binding.action in seen:
                continue
            seen.add(binding.action)
            target = self if binding in APP_BINDINGS else self.session_screen
            title = binding.description or binding.action
            help_text = f"{binding.tooltip} [{binding.id}]"
            yield SystemCommand(title, help_text, partial(self.run_action, binding.action, target))
