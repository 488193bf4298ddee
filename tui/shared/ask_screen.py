"""A one-line question (go to step, search): Enter answers, Esc cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input

from ..kit.view_screen import css_beside


class AskScreen(ModalScreen[str | None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, placeholder: str, value: str = "") -> None:
        super().__init__()
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        yield Input(value=self.value, placeholder=self.placeholder)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
