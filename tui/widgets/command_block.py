"""One proposed command in the transcript, with its state (SPEC §10.1)."""

from __future__ import annotations

from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from swedeck.core.text import visible

from .text import literal, whole_command

STATE_LABELS = {
    "proposed": "…",
    "pending": "waiting for you: y approve · n reject · e edit · a always allow",
    "approved": "approved",
    "auto": "auto-approved",
    "edited": "edited",
    "rejected": "rejected",
    "running": "running…",
    "ran": "ran",
    "interrupted": "interrupted",
}


class CommandBlock(Static):
    DEFAULT_CSS = """
    CommandBlock { margin: 0 0 1 0; padding: 0 1; border-left: thick $warning; background: $surface; }
    CommandBlock.-approved, CommandBlock.-auto, CommandBlock.-edited, CommandBlock.-running { border-left: thick $accent; }
    CommandBlock.-rejected { border-left: thick $error; color: $text-muted; }
    CommandBlock.-ran { border-left: thick $success; }
    CommandBlock.-failed { border-left: thick $error; }
    CommandBlock:hover { background: $boost; }
    """

    state: reactive[str] = reactive("proposed")

    class Selected(Message):
        def __init__(self, action_id: str) -> None:
            super().__init__()
            self.action_id = action_id

    def __init__(self, action_id: str, command: str, state: str = "proposed") -> None:
        super().__init__(markup=False)
        self.action_id = action_id
        self.command = command
        self.returncode: int | None = None
        self.duration_s: float | None = None
        self.reason = ""
        """Why it ran without asking, what an approval allowed, what an edit replaced."""
        self.allow_hint = ""
        """While pending: what `a` would allow (a prefix, or the exact command)."""
        self.set_reactive(CommandBlock.state, state)

    def on_mount(self) -> None:
        self._draw()

    def watch_state(self, state: str) -> None:
        self._draw()

    def ask(self, allow_hint: str) -> None:
        """Waiting for the person; `allow_hint` says what `a` would allow."""
        self.allow_hint = allow_hint
        self.state = "pending"
        self._draw()

    def set_command(self, command: str) -> None:
        self.command = command
        self._draw()

    def finished(self, returncode: int | None, duration_s: float, note: str = "") -> None:
        self.returncode, self.duration_s = returncode, duration_s
        self._finished_note = note
        self.state = "ran"
        self._draw()

    def _draw(self) -> None:
        state = self.state
        label = STATE_LABELS.get(state, state)
        if state == "pending" and self.allow_hint:
            label += f" {self.allow_hint}"
        if state == "ran":
            label = f"ran · exit {self.returncode if self.returncode is not None else '?'}"
            if self.duration_s is not None:
                label += f" · {self.duration_s:.2f} s"
            note = getattr(self, "_finished_note", "")
            if note:
                label += f" · {note}"
        if self.reason and state not in ("pending", "proposed"):
            label += f" · {self.reason}"
        self.set_classes(f"-{state}")
        self.set_class(state == "ran" and self.returncode not in (0, None), "-failed")
        if state == "pending":  # the question first and the command whole below it: nothing scrolls away unseen
            lines = self.command.count("\n") + 1
            size = f" · {lines} lines, shown from the first" if lines > 1 else ""
            text = (Content.styled(visible(f"[{label}{size}]\n"), "bold") + Content.styled("$ ", "bold")
                    + Content(whole_command(self.command)))
        else:
            text = literal("$ ", "bold") + literal(self.command) + literal(f"\n[{label}]", "dim italic")
        self.update(text)

    def on_click(self) -> None:
        self.post_message(self.Selected(self.action_id))
