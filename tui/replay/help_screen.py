"""F1 in replay: every key with its id and what it does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import DataTable

from .bindings import DESCRIPTIONS, REPLAY_BINDINGS


class ReplayHelp(ModalScreen[None]):
    DEFAULT_CSS = """
    ReplayHelp { align: center middle; }
    ReplayHelp DataTable { width: 90; height: auto; max-height: 80%; border: round $accent; }
    """
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        table: DataTable = DataTable(cursor_type="row")
        table.add_columns("keys", "id", "does")
        for binding in REPLAY_BINDINGS:
            table.add_row(binding.key, binding.id or "", DESCRIPTIONS.get(binding.id or "", binding.description))
        table.add_row("ctrl+p", "command_palette", "Command palette: every action, themes")
        yield table
