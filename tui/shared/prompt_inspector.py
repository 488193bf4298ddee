"""The prompt inspector (SPEC §10.5, §11.2), one for both apps: the live screen's `t` (what
the next query sends, after processors) and the replay's `t` (what the model got at a step).

One row per message: role, type, tokens, and the text (`widgets.prompt_view`). Messages a
processor changed are marked; the summary line is the core's (`prompt_view.prompt_summary`),
so both say the same things the same way. Text is shown literally.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
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
    from swedeck.core.session import PromptPreview
    from swedeck.core.trajectory.model import Trajectory


def next_prompt_summary(preview: PromptPreview, history_size: int) -> str:
    """The live prompt against the window, with the meter's own figures (the same window, the
    same prediction): the local count of these messages, and the provider-anchored "next ≈"."""
    status = preview.status
    expected = status.next_estimate if status is not None and status.next_anchored else None
    return prompt_summary(len(preview.messages), preview.total, preview.window, expected=expected,
                          dropped=max(0, history_size - len(preview.messages)))


PROMPT_IN_WORKER = 2_000
"""A step whose history holds more messages than this has its prompt worked out in a worker,
by `t` (replay, diff: `open_step_prompt`) and what-if (the last step of a 103,000-step
rollout: 34 s of building messages and counting their tokens)."""


def open_step_prompt(screen: Screen[Any], trajectory: Trajectory, step: int, processors: list[dict[str, Any]],
                     window: int | None, *, trust_file: bool = False,
                     still: Callable[[], bool] = lambda: True) -> None:
    """`t` at a step (the replay's, the diff's, one way): what the model got, in the inspector.
    Past `PROMPT_IN_WORKER` messages of history it is worked out in a worker (seconds of
    building messages and counting their tokens), and opened once done if the person is still
    on `screen` (`still`: and at that step); an error is the view's to say (`kit.view_screen`)."""
    from swedeck.core.prompt_view import step_prompt  # not at import: the processors' models (bench B2)

    history = trajectory.steps[step - 1].prompt_end
    if history <= PROMPT_IN_WORKER:
        screen.app.push_screen(PromptInspector.at_step(step_prompt(trajectory, step, processors, window,
                                                                   trust_file=trust_file)))
        return
    screen.notify(visible(f"working out step {step}'s prompt: {history:,} messages…"), markup=False)
    app = screen.app

    def shown(prompt: StepPrompt) -> None:
        if app.screen is screen and still():
            app.push_screen(PromptInspector.at_step(prompt))

    def work() -> None:
        prompt = step_prompt(trajectory, step, processors, window, trust_file=trust_file)
        with suppress(RuntimeError):  # the app ended meanwhile
            app.call_from_thread(shown, prompt)
    screen.run_worker(work, thread=True, exclusive=True, group="prompt", exit_on_error=False)


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
