"""The prompt inspector (SPEC §10.5, §11.2), one for both apps: the live screen's `t` (what
the next query sends, after processors) and the replay's `t` (what the model got at a step).

One row per message: role, type, tokens, and the text (`widgets.prompt_view`). Messages a
processor changed are marked; the summary line is the core's (`prompt_view.prompt_summary`),
so both say the same things the same way. Text is shown literally.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from swedeck.core.messages import Message
from swedeck.core.prompt_view import PromptLine, StepPrompt, prompt_summary, step_summary
from swedeck.core.text import visible

from ..kit.view_screen import css_beside
from ..widgets.prompt_view import PromptView
from ..widgets.text import literal

if TYPE_CHECKING:
    from swedeck.core.replay.open_run import OpenRun, PromptReady
    from swedeck.core.session import PromptPreview


def next_prompt_summary(preview: PromptPreview, history_size: int) -> str:
    """The live prompt against the window, with the meter's own figures (the same window, the
    same prediction): the local count of these messages, and the provider-anchored "next ≈"."""
    status = preview.status
    expected = status.next_estimate if status is not None and status.next_anchored else None
    return prompt_summary(len(preview.messages), preview.total, preview.window, expected=expected,
                          dropped=max(0, history_size - len(preview.messages)))


def open_step_prompt(screen: Screen[Any], run: OpenRun, step: int, processors: list[dict[str, Any]],
                     window: int | None, *, trust_file: bool = False) -> None:
    """`t` at a step (the replay's, the diff's, one way): what the model got, in the inspector.
    Past `open_run.PROMPT_IN_WORKER` messages of history the run works it out in a thread
    (seconds of building messages and counting their tokens): said now, and opened by the
    view's handler of its `PromptReady` (`shown_prompt`)."""
    prompt = run.prompt(step, processors, window, trust_file=trust_file)
    if prompt is not None:
        screen.app.push_screen(PromptInspector.at_step(prompt))
        return
    screen.notify(visible(f"working out step {step}'s prompt: {run.history_at(step):,} messages…"), markup=False)


def shown_prompt(screen: Screen[Any], ready: PromptReady, *, still: bool) -> None:
    """A prompt the run worked out in its thread, opened if the person is still on `screen`
    (`still`: and at its step)."""
    if screen.app.screen is screen and still:
        screen.app.push_screen(PromptInspector.at_step(ready.prompt))


class PromptInspector(ModalScreen[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,t", "close", "Close", id="close_inspector")]

    def __init__(self, title: str, summary: str, lines: Iterable[PromptLine], errors: Iterable[str] = ()) -> None:
        super().__init__()
        self.title_text = title
        self.summary = summary
        self.lines = list(lines)
        self.errors = list(errors)

    @classmethod
    def next_prompt(cls, preview: PromptPreview, history: list[Message]) -> PromptInspector:
        """The live screen's: what the model gets next."""
        return cls(preview.title, next_prompt_summary(preview, len(history)), preview.lines, preview.errors)

    @classmethod
    def at_step(cls, prompt: StepPrompt) -> PromptInspector:
        """The replay's: what the model got at a step."""
        return cls(f"What the model got at step {prompt.step} (after history processors)", step_summary(prompt),
                   prompt.lines, prompt.errors)

    def compose(self) -> ComposeResult:
        with Vertical(id="inspector-box"):
            yield Label(literal(self.title_text), id="inspector-title")
            yield Static(literal(self.summary), id="inspector-summary", markup=False)
            yield PromptView(self.lines, self.errors, id="inspector-messages")
            yield Label("Esc closes", id="inspector-hint")

    def action_close(self) -> None:
        self.dismiss(None)
