"""Confirm mode: a compaction's summary before it is used (SPEC §17).

The summary is shown in an editable box: accept it as written or as edited (ctrl+s or
Use), or keep the full history (escape). The answer is the text to use, or None.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea

from swedeck.core.redact import Redactor
from swedeck.core.text import visible

from ..kit.view_screen import css_beside
from ..widgets.text import literal


def figures(messages: int, before: int | None, after: int | None) -> str:
    """`40 messages -> one summary · next prompt ≈ 182,400 -> 14,900 tokens`."""
    sizes = f" · next prompt ≈ {before:,} -> {after:,} tokens" if before is not None and after is not None else ""
    return f"{messages} messages -> one summary{sizes}"


class CompactionScreen(ModalScreen[str | None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("ctrl+s", "use", "Use the summary", id="compaction_use"),
                Binding("escape", "keep", "Keep the full history", id="compaction_keep"),
                Binding("e", "edit", "Edit the summary", id="compaction_edit")]

    def __init__(self, summary: str, messages: int, before: int | None, after: int | None, ledger: str = "") -> None:
        super().__init__()
        self.ledger = ledger
        """Kept after the summary word for word (`trajectory/ledger.py`): shown, not edited."""
        self.summary = summary
        self.shown = visible(Redactor().text(summary))
        """What the box shows: the model's text with secrets masked and escape codes drawn as marks
        (never sent to the terminal). Used as it is, the summary is the model's own text."""
        self.detail = figures(messages, before, after)

    def compose(self) -> ComposeResult:
        with Vertical(id="compaction-box"):
            yield Label("Compact the history with this summary?", id="compaction-title")
            yield Static(literal(self.detail + " · e edits it"), id="compaction-detail")
            yield TextArea(self.shown, id="compaction-summary", soft_wrap=True, read_only=True)
            if self.ledger:
                with VerticalScroll(id="compaction-ledger"):
                    yield Static(literal(visible(Redactor().text(self.ledger))), markup=False)
            with Horizontal():
                yield Button("Use it (ctrl+s)", variant="primary", id="use")
                yield Button("Keep the full history (esc)", variant="default", id="keep")

    def on_mount(self) -> None:
        # nothing takes keys until the person says so: the review can open as they press `y` for a
        # command, and that `y` must not land in the summary (issue 62)
        self.set_focus(None)

    def action_edit(self) -> None:
        area = self.query_one(TextArea)
        area.read_only = False
        area.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "use":
            self.action_use()
        else:
            self.action_keep()

    def action_use(self) -> None:
        text = self.query_one(TextArea).text
        self.dismiss(self.summary if text == self.shown else text)

    def action_keep(self) -> None:
        self.dismiss(None)
