"""`t` in replay (SPEC §10.5, §11.2): the exact messages the model got at the selected step,
after the recorded (or configured) processors — the same figures as `swedeck prompt`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from swedeck.core.prompt_view import StepPrompt

from ..widgets.prompt_view import PromptView
from ..widgets.text import literal


def prompt_summary(prompt: StepPrompt) -> str:
    names = ", ".join(p["type"] for p in prompt.processors) or "none"
    window = f" of {prompt.window:,}" if prompt.window else " (unknown window)"
    saved = prompt.history_tokens - prompt.total_tokens
    return (f"step {prompt.step} · {prompt.provenance} · processors ({prompt.processors_source}): {names} · "
            f"total {prompt.total_tokens:,} tokens{window} · without processors {prompt.history_tokens:,} "
            f"(saved {saved:,})")


class PromptScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen #prompt-box { width: 95%; height: 90%; border: round $accent; background: $surface; }
    PromptScreen #prompt-summary { height: auto; padding: 0 1; background: $panel; }
    """
    BINDINGS = [Binding("escape,q,t", "dismiss", "Close")]

    def __init__(self, prompt: StepPrompt) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Static(literal(prompt_summary(self.prompt)), id="prompt-summary", markup=False)
            yield PromptView(self.prompt.lines, self.prompt.errors, id="prompt-messages")
