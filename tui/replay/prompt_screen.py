"""`t` in replay (SPEC §10.5, §11.2): the exact messages the model got at the selected step,
after the recorded (or configured) processors — the same figures as `swedeck prompt`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from swedeck.core.prompt_view import StepPrompt

PREVIEW_CHARS = 600


def prompt_summary(prompt: StepPrompt) -> str:
    names = ", ".join(p["type"] for p in prompt.processors) or "none"
    window = f" of {prompt.window:,}" if prompt.window else " (unknown window)"
    saved = prompt.history_tokens - prompt.total_tokens
    return (f"step {prompt.step} · processors ({prompt.processors_source}): {names} · "
            f"total {prompt.total_tokens:,} tokens{window} · without processors {prompt.history_tokens:,} "
            f"(saved {saved:,})")


def prompt_lines(prompt: StepPrompt) -> list[Content]:
    out = []
    for position, line in enumerate(prompt.lines):
        message = line.message
        mark = " · changed by processors" if line.changed else ""
        head = f"[{position}] {message.role} ({message.message_type.value}) · {line.tokens} tokens{mark}"
        text = message.text
        if len(text) > PREVIEW_CHARS:
            text = text[:PREVIEW_CHARS] + f"… ({len(message.text) - PREVIEW_CHARS} more chars)"
        for call in message.tool_calls or ():
            text += f"\n[tool call] {call.function.name}({call.function.arguments})"
        out.append(Content.styled(head, "bold") + Content("\n" + text))
    return out


class PromptScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen #prompt-box { width: 95%; height: 90%; border: round $accent; background: $surface; }
    PromptScreen #prompt-summary { height: auto; padding: 0 1; background: $panel; }
    PromptScreen .prompt-line { padding: 0 1; margin: 0 0 1 0; }
    PromptScreen .prompt-error { color: $error; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,t", "dismiss", "Close")]

    def __init__(self, prompt: StepPrompt) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="prompt-box"):
            yield Static(Content(prompt_summary(self.prompt)), id="prompt-summary", markup=False)
            for error in self.prompt.errors:
                yield Static(Content(f"processor error: {error}"), classes="prompt-error", markup=False)
            for line in prompt_lines(self.prompt):
                yield Static(line, classes="prompt-line", markup=False)
