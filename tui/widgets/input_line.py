"""The input line: task, follow-ups, rejection comments, edits, human-mode commands.

What a submitted line means depends on `purpose`, set by the screen when the agent asks
(or when the person chose reject / edit). Without a purpose the line is disabled, so
single-key bindings (y, n, e, a) reach the screen.
"""

from __future__ import annotations

from textual.reactive import var
from textual.widgets import Input

PLACEHOLDERS = {
    "task": "What should the agent do? (Enter to start)",
    "follow_up": "The agent submitted. Follow-up task, or Enter on an empty line to end",
    "human_command": "Human mode: a bash command to run (Esc leaves the line, then m switches mode)",
    "after_interrupt": "Interrupted. A message to the agent, or Enter to continue",
    "reject": "Why reject? This comment goes to the model (Enter sends, Esc cancels)",
    "edit": "Edit the command, Enter runs it (Esc cancels)",
    "raise_limits": "New step limit (a number), Enter to continue",
}


class InputLine(Input):
    purpose: var[str | None] = var(None, bindings=True)
    """What Enter does with the line (None: the line is disabled); the footer's keys follow it."""

    DEFAULT_CSS = """
    InputLine { height: 3; border: tall $panel; }
    InputLine:focus { border: tall $primary; }
    InputLine.-reject:focus { border: tall $error; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder="", disabled=True, select_on_focus=False, **kwargs)

    def ask(self, purpose: str, value: str = "", placeholder: str | None = None, focus: bool = True) -> None:
        """Ready the line for `purpose`; with `focus` it takes the keys at once (else Enter or `i` does)."""
        self.purpose = purpose
        self.disabled = False
        self.placeholder = placeholder or PLACEHOLDERS.get(purpose, "")
        self.set_classes(f"-{purpose}")
        self.value = value
        self.cursor_position = len(value)
        if focus:  # at once, not `focus()` (a call_later): the keys typed next are already queued
            self.screen.set_focus(self)

    def done(self) -> None:
        self.purpose = None
        self.value = ""
        self.placeholder = ""
        self.disabled = True
