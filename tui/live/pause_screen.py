"""A pause: a limit was reached, the API kept failing, or the context overflowed (SPEC §6.4).

The person decides: retry, raise the limits, take the smallest processor change that fits
the window (offered, with the size it predicts, when the context window was exceeded), or
quit. The answer is a `PauseDecision` the agent
waits for.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from swedeck.core.agent.context import ContextFit
from swedeck.core.events import PauseDecision

from ..kit.view_screen import css_beside
from ..widgets.text import literal

TITLES = {
    "limit": "A limit was reached",
    "api_error": "The model API failed (retries exhausted)",
    "context_exceeded": "The prompt no longer fits the context window",
}


class PauseScreen(ModalScreen[PauseDecision]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q", "quit_session", "Quit", id="pause_quit"),
                Binding("r", "retry", "Retry", id="pause_retry"),
                Binding("p", "enable_processor", "Processor", id="pause_processor")]

    def __init__(self, reason: str, detail: str, fit: ContextFit | None = None) -> None:
        super().__init__()
        self.reason = reason
        self.detail = detail
        self.fit = fit
        """`agent.context.ContextFit`: the processors that fit, offered as `p`."""

    def compose(self) -> ComposeResult:
        with Vertical(id="pause-box"):
            yield Label(TITLES.get(self.reason, "Paused"), id="pause-title")
            yield Static(literal(self.detail), id="pause-detail")
            with Horizontal():
                if self.reason == "limit":
                    yield Button("Raise limits", variant="primary", id="raise_limits")
                else:
                    yield Button("Retry (r)", variant="primary", id="retry")
                if self.reason == "context_exceeded" and self.fit is not None:
                    yield Button(literal(f"Use {self.fit.change} (p)"), variant="success", id="enable_processor")
                yield Button("Quit (q)", variant="error", id="quit")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        kind = event.button.id or "quit"
        processors = self.fit.processors if kind == "enable_processor" and self.fit is not None else None
        self.dismiss(PauseDecision(kind=kind, processors=processors))  # type: ignore[arg-type]

    def action_retry(self) -> None:
        self.dismiss(PauseDecision(kind="raise_limits" if self.reason == "limit" else "retry"))

    def action_enable_processor(self) -> None:
        if self.reason == "context_exceeded" and self.fit is not None:
            self.dismiss(PauseDecision(kind="enable_processor", processors=self.fit.processors))

    def action_quit_session(self) -> None:
        self.dismiss(PauseDecision(kind="quit"))
