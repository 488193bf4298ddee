"""F1 / ?: every key of a view with its id, its keys (after the person's `ui.keymap`) and
what it does (SPEC §10.2). The live UI and replay show the same screen for their bindings;
what a key does is its binding's `tooltip`, so a binding cannot lack a description here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from ..kit.view_screen import css_beside


class HelpScreen(ModalScreen[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss_help", "Close", id="close_help")]

    def __init__(self, bindings: Sequence[Binding], keymap: Mapping[str, str]) -> None:
        super().__init__()
        self.bindings = bindings
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Label("Keys (remap by id in config: ui.keymap: {id: keys})", id="help-title")
            table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True)
            table.add_columns("keys", "id", "does")
            for binding in self.bindings:
                keys = self.keymap.get(binding.id or "", binding.key)
                shown = ", ".join(self.app.get_key_display(Binding(key.strip(), "")) for key in keys.split(","))
                table.add_row(shown, binding.id or "", binding.tooltip or binding.description)
            table.add_row("ctrl+p", "command_palette", "Command palette: every action, themes")
            yield table
            yield Label("Esc closes", id="help-hint")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
