"""A line in the transcript that is not the model's: the task, a comment, a notice."""

from __future__ import annotations

from textual.widgets import Static

from .text import literal


class Note(Static):
    DEFAULT_CSS = """
    Note { margin: 0 0 1 0; padding: 0 1; color: $text-muted; }
    Note.-task { color: $foreground; border-left: thick $primary; background: $surface; }
    Note.-user { color: $foreground; border-left: thick $secondary; }
    Note.-warning { color: $warning; }
    Note.-error { color: $error; }
    Note.-final { color: $success; border-left: thick $success; }
    """

    def __init__(self, text: str, kind: str = "info", label: str = "") -> None:
        super().__init__(markup=False, classes=f"-{kind}")
        self._text = text
        self._label = label

    def on_mount(self) -> None:
        content = literal(f"{self._label}: ", "bold") + literal(self._text) if self._label else literal(self._text)
        self.update(content)
