"""A one-line question over the bottom of a view (go to a step, search): Enter answers, Esc
cancels, and the focus goes back where it was.

It sits on a layer of its own (`ask`, which the view declares) over the footer, made visible
and hidden, never laid out again: showing it redraws its own rows, and no screen is pushed. The dialog screen it replaces cost 120-137 ms
from Enter to the step on screen, on any file (its screen pushed and popped restyled and
redrew every widget: issue 49, a key p99 <= 50 ms).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Input

Answer = Callable[[str | None], None]


class AskLine(Input):
    DEFAULT_CSS = """
    AskLine { dock: bottom; layer: ask; visibility: hidden; width: 100%; border: round $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    COVERS_FOOTER = True
    """It lies over the footer: the footer is not composed again for the keys it takes (`FittedFooter`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._answer: Answer | None = None
        self._before: Widget | None = None

    def ask(self, prompt: str, value: str, answer: Answer) -> None:
        """Show the question, `value` typed already; `answer` gets what Enter sends (None: Esc)."""
        self._answer, self._before = answer, self.screen.focused
        self.placeholder, self.value = prompt, value
        self.visible = True
        self.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value)

    def action_cancel(self) -> None:
        self._close(None)

    def _close(self, value: str | None) -> None:
        answer, before = self._answer, self._before
        self._answer = self._before = None
        self.visible = False
        if before is not None and before.is_attached:
            before.focus()
        if answer is not None:
            answer(value)
