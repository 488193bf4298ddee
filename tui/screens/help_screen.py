"""F1 / ?: every binding with its id, keys and what it does (SPEC §10.2)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from ..bindings import DESCRIPTIONS, all_bindings


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help_screen.tcss"
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss_help", "Close", id="close_help")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Label("Keys (remap by id in config: ui.keymap: {id: keys})", id="help-title")
            table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
            table.add_columns("keys", "id", "does")
            keymap = getattr(self.app, "_keymap", {})
            for binding in all_bindings():
                keys = keymap.get(binding.id or "", binding.key)
                shown = ", ".join(self.app.get_key_display(Binding(key.strip(), "")) for key in keys.split(","))
                table.add_row(shown, binding.id or "", DESCRIPTIONS.get(binding.id or "", binding.description))
            table.add_row("ctrl+p", "command_palette", "Command palette: every action, themes")
            yield table
            yield Label("Esc closes", id="help-hint")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
