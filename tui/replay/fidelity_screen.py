"""`i` in replay (SPEC §9.3): the fidelity panel. What the open file recorded, what swedeck
rebuilt from it, what it does not store at all, and the records it did not turn into
messages, counted by type. The same lines as `replay --print`'s header (`fidelity.summary_lines`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..kit.view_screen import css_beside
from ..widgets.text import literal


class FidelityScreen(ModalScreen[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,i", "dismiss", "Close")]

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="fidelity-box") as box:
            box.border_title = "fidelity"
            yield Static(literal("\n".join(self.lines)), id="fidelity-text", markup=False)
