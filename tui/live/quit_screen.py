"""Ctrl+Q while a command runs: ask before stopping it (SPEC §10.2)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from ..kit.view_screen import css_beside


class QuitScreen(ModalScreen[bool]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,n", "cancel", "Stay", id="quit_cancel"),
                Binding("y", "confirm", "Quit", id="quit_confirm")]

    def compose(self) -> ComposeResult:
        with Vertical(id="quit-box"):
            yield Label("A command is running. Stop it and quit?")
            with Horizontal():
                yield Button("Quit (y)", variant="error", id="quit-yes")
                yield Button("Stay (n)", variant="primary", id="quit-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit-yes")

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        self.dismiss(True)
