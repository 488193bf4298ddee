"""The input line: task, follow-ups, rejection comments, edits, human-mode commands.

What a submitted line means depends on `purpose`, bound to the session state (the agent
asked, or the person chose reject / edit). Without a purpose the line is disabled, so
single-key bindings (y, n, e, a) reach the screen.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.reactive import var
from textual.widgets import Input

PLACEHOLDERS = {
    "task": "What should the agent do? (Enter to start)",
    "follow_up": "The agent submitted. Enter (or i) to type a follow-up task; q (or Enter on the empty line) leaves",
    "human_command": "Human mode: a bash command to run (Esc leaves the line, then m switches mode)",
    "after_interrupt": "Interrupted. A message to the agent, or Enter to continue",
    "reject": "Why reject? This comment goes to the model (Enter sends, Esc cancels)",
    "edit": "Edit the command, Enter runs it (Esc cancels)",
}


class InputLine(Input):
    BINDINGS = [Binding("up", "history(-1)", "Earlier line", show=False, id="input_history_back"),
                Binding("down", "history(1)", "Later line", show=False, id="input_history_forward")]

    purpose: var[str | None] = var(None, always_update=True)
    """What Enter does with the line (None: the line is off). Bound to the screen's
    `line_purpose`: each change readies the line afresh, empty."""

    DEFAULT_CSS = """
    InputLine { height: 3; border: tall $panel; }
    InputLine:focus { border: tall $primary; }
    InputLine.-reject:focus { border: tall $error; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(placeholder="", disabled=True, select_on_focus=False, **kwargs)
        self.history: list[str] = []
        """Every line sent this session (tasks, comments, messages, commands), oldest first."""
        self._browsing: int | None = None
        self._draft = ""

    def watch_purpose(self, purpose: str | None) -> None:
        self.disabled = purpose is None
        self.placeholder = PLACEHOLDERS.get(purpose, "") if purpose else ""
        self.set_classes(f"-{purpose}" if purpose else "")
        self.value = ""
        self._browsing = None

    async def action_submit(self) -> None:
        text = self.value
        if text.strip() and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._browsing = None
        await super().action_submit()

    def action_history(self, step: int) -> None:
        """↑/↓: through the lines sent before, as a shell does; past the newest, the draft again."""
        if not self.history:
            return
        if self._browsing is None:
            self._browsing, self._draft = len(self.history), self.value
        self._browsing = max(0, min(len(self.history), self._browsing + step))
        self.fill(self._draft if self._browsing == len(self.history) else self.history[self._browsing])

    def fill(self, value: str) -> None:
        """Start the line with `value`, the cursor at its end (an edit starts from the command)."""
        self.value = value
        self.cursor_position = len(value)
